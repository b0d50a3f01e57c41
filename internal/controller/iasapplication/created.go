package iasapplication

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/cache"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// createdTTL is how long what a Create learned stands in for IAS until an
// Observe is recorded: long enough for the Observe that follows every Create
// even behind a large bring-up (one that came too late cost a listing of the
// app's secrets), and no longer than a poll.
const createdTTL = 5 * time.Minute

// created remembers, per resource, what its Create just made, so that the
// Observe that crossplane-runtime runs right after every Create need not ask IAS
// again, nor read a connection Secret the cache may not hold yet.
type created struct {
	mu sync.Mutex
	m  map[types.UID]createdApp
	// tried holds the resources this process sent a create for, answered or
	// not, for createdTTL; made on first use.
	tried *cache.Expiring
}

// noteCreateSent records that a create of the resource's app is sent now.
func (c *created) noteCreateSent(uid types.UID) {
	c.triedCreates().Set(uid, struct{}{}, createdTTL)
}

// triedLately tells whether this process sent a create for the resource
// within createdTTL: only then may the cache lag behind the record of that
// create. A create by an earlier process was recorded before it ended, and
// the cache was filled after.
func (c *created) triedLately(uid types.UID) bool {
	_, ok := c.triedCreates().Get(uid)
	return ok
}

func (c *created) triedCreates() *cache.Expiring {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tried == nil {
		c.tried = cache.NewExpiring()
	}
	return c.tried
}

// createdApp is what a Create made: the app and its one secret, value included
// (it is in the connection Secret already; kept in memory only).
type createdApp struct {
	app    ias.Application
	secret ias.APISecret
	at     time.Time
}

func (c *created) put(uid types.UID, a createdApp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.UID]createdApp{}
	}
	c.m[uid] = a
}

// recall returns what the resource's Create made, if it is recent and about
// the app with the given ID, until the resource's status records an Observe
// (observed: status.atProvider.secretsCheckedAt, which a Create does not set).
// Until then a status write lost to a conflict (core, the Usage controller and
// the provider all write a composed resource during bring-up) costs no IAS
// calls.
func (c *created) recall(uid types.UID, appID string, observed bool, now time.Time) (createdApp, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[uid]
	// Entries of resources whose Observe never came are dropped as they age.
	for k, v := range c.m {
		if now.Sub(v.at) > createdTTL {
			delete(c.m, k)
		}
	}
	if !ok || a.app.ID != appID || now.Sub(a.at) > createdTTL || observed {
		delete(c.m, uid)
		return createdApp{}, false
	}
	return a, true
}
