// Package inventory lists each IAS tenant's applications for the polls of many
// resources to read, and holds back the first reconcile of each resource after
// a start until its tenant's first listing has shown its app. It wraps the
// clients of an ias.Pool and keeps what it lists apart per Pool state (tenant
// URL and credentials): a listing made with one ProviderConfig's
// credentials is never read by, nor dropped for, another's.
package inventory

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// An Inventory is every application of a tenant as one paged list showed them.
// Polls of many resources read it instead of one GET each: a paged list costs
// a request per hundred apps, where one GET per app would take IAS's whole
// rate limit for minutes.
type Inventory struct {
	// At is when the list began.
	At   time.Time
	Apps map[string]ias.Application
}

// Clients hands out IAS clients per tenant (ias.Pool).
type Clients interface {
	Client(ias.Tenant) (ias.Client, error)
}

// A Client is an IAS client that also reads its tenant's inventory.
type Client interface {
	ias.Client
	// ListedApplication returns the app with the UUID as the tenant's
	// inventory shows it; found is false when the inventory lacks it.
	ListedApplication(ctx context.Context, id string, maxAge time.Duration) (app ias.Application, found bool, err error)
}

// overBudgetPause is how long a tenant whose listing passed the budget is
// not listed again.
const overBudgetPause = 10 * time.Minute

// listLag bounds how long IAS's lists may lag behind a write: a listing that
// began less than this after the provider changed or deleted an app may still
// show it as it was.
const listLag = time.Minute

// Tenants keeps an inventory per tenant URL and credentials.
type Tenants struct {
	clients Clients
	metrics *Metrics
	first   *firstListings
	// idleAfter drops the inventory of credentials no client asked for this long.
	idleAfter time.Duration
	// changed remembers the apps this process changed or deleted, per tenant
	// URL, whatever the credentials: until a listing has caught up, the
	// inventories do not answer for them, so that no owner's change (a hand
	// over, a deletion) is read back as it was before.
	changed *changes

	// namespaces bounds what the inventories of namespaced configs hold and
	// list at once, together.
	namespaces *Budget

	mu        sync.Mutex
	tenants   map[uint64]*tenant
	lastSweep time.Time
}

// tenant is the inventory of one tenant URL and credentials.
type tenant struct {
	lastUsed atomic.Int64
	// budget is the Budget of a namespaced config's inventory; nil for the
	// platform's.
	budget *Budget

	// listing makes resources share one listing of the tenant's apps;
	// refreshing is set while one runs in the background.
	listing    singleflight.Group
	refreshing atomic.Bool

	mu        sync.Mutex
	inventory *Inventory
	// bytes is what inventory holds, as the budget counts it.
	bytes int64
	// overBudgetUntil: a listing stopped at the budget is not tried again
	// before then; its resources read their apps one by one.
	overBudgetUntil time.Time
	// partial holds what the pages of the first listing showed so far.
	partial map[string]ias.Application
}

// drop lets go of the inventory, giving its bytes back.
func (st *tenant) drop() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.dropLocked()
}

// dropLocked is drop; the caller holds st.mu.
func (st *tenant) dropLocked() {
	if st.budget != nil {
		st.budget.give(st.bytes)
	}
	st.inventory, st.bytes = nil, 0
}

// New returns the inventories of the tenants that clients call; nil metrics
// are unregistered ones, a nil budget NewBudget's defaults.
func New(clients Clients, m *Metrics, namespaces *Budget) *Tenants {
	if m == nil {
		m = NewMetrics(nil)
	}
	if namespaces == nil {
		namespaces = NewBudget(0, 0)
	}
	m.namespaces.Store(namespaces)
	return &Tenants{clients: clients, metrics: m, first: &firstListings{metrics: m}, idleAfter: time.Hour, tenants: map[uint64]*tenant{},
		changed: newChanges(time.Hour), namespaces: namespaces}
}

// Client returns a client of the tenant that reads its inventory.
func (ts *Tenants) Client(t ias.Tenant) (Client, error) {
	return ts.client(t)
}

func (ts *Tenants) client(t ias.Tenant) (*client, error) {
	c, err := ts.clients.Client(t)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ts.mu.Lock()
	if now.Sub(ts.lastSweep) >= time.Minute {
		ts.lastSweep = now
		for g, st := range ts.tenants {
			if now.Sub(time.Unix(0, st.lastUsed.Load())) > ts.idleAfter {
				delete(ts.tenants, g)
				st.drop()
			}
		}
	}
	st, ok := ts.tenants[c.Generation()]
	if !ok {
		st = &tenant{}
		if t.Namespace != "" {
			st.budget = ts.namespaces
		}
		ts.tenants[c.Generation()] = st
	}
	ts.mu.Unlock()
	st.lastUsed.Store(now.UnixNano())
	return &client{Client: c, tenant: st, url: t.URL, first: ts.first, metrics: ts.metrics, changed: ts.changed}, nil
}

// StartListing lists the tenant's applications in the background, unless it
// has an inventory already. Until the platform's first listings end,
// WhenListed holds back the first reconcile of resources whose app they have
// not shown yet.
func (ts *Tenants) StartListing(t ias.Tenant) error {
	c, err := ts.client(t)
	if err != nil {
		return err
	}
	c.tenant.mu.Lock()
	listed := c.tenant.inventory != nil
	c.tenant.mu.Unlock()
	if listed {
		return nil
	}
	// Only the platform's first listings hold back first reconciles: every
	// waiting resource goes on once the last first listing ends, and a
	// namespace's tenant that hangs would hold the platform's resources.
	barrier := c.tenant.budget == nil
	if barrier {
		ts.first.begin()
	}
	go func() {
		if barrier {
			defer ts.first.end()
		}
		// Bounded by the client's own call timeouts and attempts.
		_, _ = c.list(context.Background())
	}()
	return nil
}

// WhenListed calls fn once a tenant's first listing has shown the application
// with the UUID, or once no first listing runs any more, and tells whether it
// will. It returns false, and never calls fn, when no first listing runs or one
// has shown the app already.
func (ts *Tenants) WhenListed(id string, fn func()) bool {
	return ts.first.whenListed(id, fn)
}

type client struct {
	ias.Client
	tenant  *tenant
	url     string
	first   *firstListings
	metrics *Metrics
	changed *changes
}

// PatchApplication patches the app, and keeps the inventories from answering
// for it with what they listed before.
func (c *client) PatchApplication(ctx context.Context, id string, patches []ias.Patch) error {
	err := c.Client.PatchApplication(ctx, id, patches)
	// Also on an error: the patch may have been applied.
	c.changed.put(c.url, id, time.Now())
	return err
}

// DeleteApplication deletes the app, and keeps the inventories from answering
// for it with what they listed before.
func (c *client) DeleteApplication(ctx context.Context, id string) error {
	err := c.Client.DeleteApplication(ctx, id)
	c.changed.put(c.url, id, time.Now())
	return err
}

// ListedApplication reads the tenant's inventory. Once an inventory exists it
// is read at once; when it is older than maxAge a newer one is listed in the
// background, so polls never wait for a listing (a hundred pages one after the
// other take seconds at IAS's latency). While the tenant's first listing runs,
// an app one of its pages showed is returned at once; else the caller waits
// for the listing, which callers that ask at once share. The inventory lags as
// IAS's lists do: an app missing from it may still exist.
func (c *client) ListedApplication(ctx context.Context, id string, maxAge time.Duration) (ias.Application, bool, error) {
	c.tenant.mu.Lock()
	inv := c.tenant.inventory
	app, listed := c.tenant.partial[id]
	overBudget := time.Now().Before(c.tenant.overBudgetUntil)
	c.tenant.mu.Unlock()
	switch {
	case inv == nil && overBudget:
		// Read one by one (by the caller) until the budget is tried again.
		return ias.Application{}, false, nil
	case inv == nil && listed:
		return app, true, nil
	case inv == nil:
		var err error
		if inv, err = c.list(ctx); errors.Is(err, errNoTurn) {
			// Every namespaced listing's turn is taken: read one by one (by
			// the caller); a later reconcile tries for a turn again.
			return ias.Application{}, false, nil
		} else if err != nil {
			return ias.Application{}, false, err
		}
	case time.Since(inv.At) >= maxAge && c.tenant.refreshing.CompareAndSwap(false, true):
		// Bounded by the client's own call timeouts; not by the caller's
		// reconcile, which ends long before the listing does.
		go func() {
			defer c.tenant.refreshing.Store(false)
			_, _ = c.list(context.WithoutCancel(ctx))
		}()
	}
	if at, ok := c.changed.at(c.url, id); ok && inv.At.Before(at.Add(listLag)) {
		// Listed before this process's own change may show: ask IAS.
		return ias.Application{}, false, nil
	}
	app, found := inv.Apps[id]
	return app, found, nil
}

// errNoTurn: a namespaced config's listing found every turn of the budget
// taken.
var errNoTurn = errors.New("every listing of namespaces' ProviderConfigs at once is running")

// list lists every app of the tenant once for all who ask meanwhile. The
// pages of a tenant's first listing are readable as they come. A namespaced
// config's listing runs only on a free turn of the budget (else errNoTurn)
// and counts its bytes in it: one that would pass it is stopped, and its
// inventory dropped.
func (c *client) list(ctx context.Context) (*Inventory, error) {
	v, err, _ := c.tenant.listing.Do(c.url, func() (any, error) {
		budget := c.tenant.budget
		if budget != nil {
			release, ok := budget.begin()
			if !ok {
				return nil, errNoTurn
			}
			defer release()
		}
		ctx, stop := context.WithCancelCause(ctx)
		defer stop(nil)
		var taken int64
		inv := &Inventory{At: time.Now(), Apps: map[string]ias.Application{}}
		c.tenant.mu.Lock()
		first := c.tenant.inventory == nil
		if first {
			c.tenant.partial = inv.Apps
		}
		c.tenant.mu.Unlock()
		err := c.ListApplications(ctx, func(page []ias.Application) {
			if budget != nil && context.Cause(ctx) == nil {
				var n int64
				for _, a := range page {
					n += appBytes(a)
				}
				if err := budget.take(n); err != nil {
					stop(err)
					return
				}
				taken += n
			}
			c.tenant.mu.Lock()
			for _, a := range page {
				inv.Apps[a.ID] = a
			}
			c.tenant.mu.Unlock()
			if first {
				c.first.page(page)
			}
		})
		if cause := context.Cause(ctx); errors.Is(cause, ErrOverBudget) {
			err = cause
		}
		c.tenant.mu.Lock()
		defer c.tenant.mu.Unlock()
		if first {
			c.tenant.partial = nil
		}
		if err != nil {
			if budget != nil {
				budget.give(taken)
			}
			if errors.Is(err, ErrOverBudget) {
				// The old copy goes too, so that the namespaces together stay
				// within the budget.
				c.tenant.dropLocked()
				c.tenant.overBudgetUntil = time.Now().Add(overBudgetPause)
			}
			return nil, err
		}
		c.metrics.listings.Observe(time.Since(inv.At).Seconds())
		c.tenant.dropLocked()
		c.tenant.inventory, c.tenant.bytes = inv, taken
		return inv, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Inventory), nil //nolint:forcetypeassert // The listing returns an *Inventory.
}
