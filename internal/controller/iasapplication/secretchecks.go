package iasapplication

import (
	"hash/fnv"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/recent"
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
//
// A resource not checked for two intervals is forgotten (a deleted one).
type secretChecks struct {
	at *recent.Memory[types.UID, time.Time]
}

func newSecretChecks(every time.Duration) *secretChecks {
	return &secretChecks{at: recent.New[types.UID, time.Time](2*every, maxChecked)}
}

// maxChecked bounds the resources whose last check is remembered: every
// Ready app is, and one forgotten costs a listing of its secrets.
const maxChecked = 50000

// checked records that cr's secrets were listed at t.
func (c *secretChecks) checked(cr *v1alpha1.IASApplication, t time.Time) {
	c.at.Put(cr.GetUID(), t, t)
}

// last returns when cr's secrets count as last listed, for checks every
// interval; zero when they never were.
func (c *secretChecks) last(cr *v1alpha1.IASApplication, now time.Time, every time.Duration) time.Time {
	var status time.Time
	if t := cr.Status.AtProvider.SecretsCheckedAt; t != nil {
		status = t.Time
	}
	if t, ok := c.at.Get(cr.GetUID(), now); ok {
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
	c.at.Put(cr.GetUID(), t, now)
	return t
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
