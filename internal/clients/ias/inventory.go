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

// Inventory returns the tenant's inventory, listing it anew if the one at hand
// is older than maxAge. Resources that ask at once share one listing. The
// inventory lags as IAS's lists do: an app missing from it may still exist.
func (c *client) Inventory(ctx context.Context, maxAge time.Duration) (*Inventory, error) {
	c.state.mu.Lock()
	cached, hc := c.state.inventory, c.state.http
	c.state.mu.Unlock()
	if cached != nil && time.Since(cached.At) < maxAge {
		return cached, nil
	}
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
