package iasapplication

import (
	"hash/fnv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
)

// secretChecks remembers when each resource's api secrets were last listed in
// IAS. A check that finds the published secret as the status records it
// changes nothing, so it writes nothing to the API server: at thousands of
// Ready runtimes an hourly status write each kept the management API server,
// and Crossplane core reacting to it, busy for nothing. The status's
// secretsCheckedAt says when a check last came with a change (the app's
// creation, a new secret).
//
// After a start nothing is remembered: a resource whose status says its
// check is overdue gets it at a point of the next interval that its UID
// picks, so that a restart spreads the checks of every app over the interval
// instead of listing every app's secrets at once.
type secretChecks struct {
	mu    sync.Mutex
	at    map[types.UID]time.Time
	swept time.Time
}

// checked records that cr's secrets were listed at t.
func (c *secretChecks) checked(cr *v1alpha1.IASApplication, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[types.UID]time.Time{}
	}
	c.at[cr.GetUID()] = t
}

// last returns when cr's secrets count as last listed, for checks every
// interval; zero when they never were.
func (c *secretChecks) last(cr *v1alpha1.IASApplication, now time.Time, every time.Duration) time.Time {
	var status time.Time
	if t := cr.Status.AtProvider.SecretsCheckedAt; t != nil {
		status = t.Time
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[types.UID]time.Time{}
	}
	c.sweepLocked(now, every)
	if t, ok := c.at[cr.GetUID()]; ok {
		if status.After(t) {
			return status
		}
		return t
	}
	if status.IsZero() || now.Sub(status) < every {
		return status
	}
	// Overdue when first seen by this process: due at a point of the next
	// interval.
	t := now.Add(-every + spread(cr.GetUID(), every))
	c.at[cr.GetUID()] = t
	return t
}

// sweepLocked forgets, at most once an interval, the resources not checked
// for two intervals: deleted ones.
func (c *secretChecks) sweepLocked(now time.Time, every time.Duration) {
	if now.Sub(c.swept) < every {
		return
	}
	c.swept = now
	for uid, t := range c.at {
		if now.Sub(t) > 2*every {
			delete(c.at, uid)
		}
	}
}

// spread is a point within every that uid picks, the same each time.
func spread(uid types.UID, every time.Duration) time.Duration {
	if every <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return time.Duration(h.Sum64() % uint64(every))
}
