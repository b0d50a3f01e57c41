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

// ListedApplication returns the app with the UUID as the tenant's inventory
// shows it; found is false when the inventory lacks it. Once an inventory exists
// it is read at once; when it is older than maxAge a newer one is listed in the
// background, so polls never wait for a listing (10,000 apps take 100 requests,
// seconds at IAS's latency). While the tenant's first listing runs, an app one of
// its pages showed is returned at once; else the caller waits for the listing,
// which callers that ask at once share. The inventory lags as IAS's lists do: an
// app missing from it may still exist.
func (c *client) ListedApplication(ctx context.Context, id string, maxAge time.Duration) (Application, bool, error) {
	c.state.mu.Lock()
	inv := c.state.inventory
	app, listed := c.state.partial[id]
	c.state.mu.Unlock()
	switch {
	case inv == nil && listed:
		return app, true, nil
	case inv == nil:
		var err error
		if inv, err = c.listInventory(ctx); err != nil {
			return Application{}, false, err
		}
	case time.Since(inv.At) >= maxAge && c.state.refreshing.CompareAndSwap(false, true):
		// Bounded by the client's own call timeouts; not by the caller's
		// reconcile, which ends long before the listing does.
		go func() {
			defer c.state.refreshing.Store(false)
			_, _ = c.listInventory(context.WithoutCancel(ctx))
		}()
	}
	app, found := inv.Apps[id]
	return app, found, nil
}

// listInventory lists every app of the tenant once for all who ask meanwhile.
// The pages of a tenant's first listing are readable as they come.
func (c *client) listInventory(ctx context.Context) (*Inventory, error) {
	c.state.mu.Lock()
	hc := c.state.http
	c.state.mu.Unlock()
	v, err, _ := c.state.listing.Do(c.tenant.URL, func() (any, error) {
		inv := &Inventory{At: time.Now(), Apps: map[string]Application{}}
		c.state.mu.Lock()
		first := c.state.inventory == nil && c.state.http == hc
		if first {
			c.state.partial = inv.Apps
		}
		c.state.mu.Unlock()
		err := c.eachApplicationPage(ctx, "", func(page []Application) {
			c.state.mu.Lock()
			for _, a := range page {
				inv.Apps[a.ID] = a
			}
			c.state.mu.Unlock()
			if first {
				c.state.first.page(page)
			}
		})
		c.state.mu.Lock()
		defer c.state.mu.Unlock()
		if first && c.state.http == hc {
			c.state.partial = nil
		}
		if err != nil {
			return nil, err
		}
		c.state.metrics.listings.Observe(time.Since(inv.At).Seconds())
		// A listing made with credentials that changed meanwhile is not kept.
		if c.state.http == hc {
			c.state.inventory = inv
		}
		return inv, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Inventory), nil //nolint:forcetypeassert // The listing returns an *Inventory.
}
