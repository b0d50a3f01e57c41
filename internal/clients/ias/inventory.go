package ias

import (
	"context"
	"time"
)

// An Inventory is every application of a tenant as one paged list showed them.
// Polls of many resources read it instead of one GET each: a tenant with 10,000
// apps is listed in 100 requests, where 10,000 GETs would take IAS's whole rate
// limit for minutes.
type Inventory struct {
	// At is when the list began.
	At   time.Time
	Apps map[string]Application
}

// Inventory returns the tenant's inventory. Once one exists it is returned at
// once; when it is older than maxAge a newer one is listed in the background,
// so polls never wait for a listing (10,000 apps take 100 requests, seconds at
// IAS's latency). Only the first caller waits for the first listing; callers
// that ask at once share it. The inventory lags as IAS's lists do: an app
// missing from it may still exist.
func (c *client) Inventory(ctx context.Context, maxAge time.Duration) (*Inventory, error) {
	c.state.mu.Lock()
	cached := c.state.inventory
	c.state.mu.Unlock()
	if cached == nil {
		return c.listInventory(ctx)
	}
	if time.Since(cached.At) >= maxAge && c.state.refreshing.CompareAndSwap(false, true) {
		// Bounded by the client's own call timeouts; not by the caller's
		// reconcile, which ends long before the listing does.
		go func() {
			defer c.state.refreshing.Store(false)
			_, _ = c.listInventory(context.WithoutCancel(ctx))
		}()
	}
	return cached, nil
}

// listInventory lists every app of the tenant once for all who ask meanwhile.
func (c *client) listInventory(ctx context.Context) (*Inventory, error) {
	c.state.mu.Lock()
	hc := c.state.http
	c.state.mu.Unlock()
	v, err, _ := c.state.listing.Do(c.tenant.URL, func() (any, error) {
		at := time.Now()
		apps, err := c.listApplications(ctx, "")
		if err != nil {
			return nil, err
		}
		inv := &Inventory{At: at, Apps: make(map[string]Application, len(apps))}
		for _, a := range apps {
			inv.Apps[a.ID] = a
		}
		c.state.mu.Lock()
		// A listing made with credentials that changed meanwhile is not kept.
		if c.state.http == hc {
			c.state.inventory = inv
		}
		c.state.mu.Unlock()
		return inv, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Inventory), nil //nolint:forcetypeassert // The listing returns an *Inventory.
}
