package inventory

import (
	"sync"
	"time"
)

// changes records when this process last changed or deleted each app, per
// tenant URL, for as long as an inventory may be older than that (forget).
type changes struct {
	forget time.Duration

	mu        sync.Mutex
	byApp     map[changeKey]time.Time
	lastSweep time.Time
}

type changeKey struct{ url, id string }

func newChanges(forget time.Duration) *changes {
	return &changes{forget: forget, byApp: map[changeKey]time.Time{}}
}

// put records a change of the app with the UUID id at the tenant URL.
func (c *changes) put(url, id string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byApp[changeKey{url, id}] = at
	if at.Sub(c.lastSweep) < time.Minute {
		return
	}
	c.lastSweep = at
	for k, t := range c.byApp {
		if at.Sub(t) > c.forget {
			delete(c.byApp, k)
		}
	}
}

// at returns when the app was last changed, if within forget.
func (c *changes) at(url, id string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.byApp[changeKey{url, id}]
	return t, ok && time.Since(t) <= c.forget
}
