package iasapplication

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// createdTTL is how long what a Create learned stands in for IAS: long enough
// for the Observe that follows every Create, short enough never to hide drift.
const createdTTL = 30 * time.Second

// created remembers, per resource, what its Create just made, so that the
// Observe that crossplane-runtime runs right after every Create need not ask IAS
// again, nor read a connection Secret the cache may not hold yet.
type created struct {
	mu sync.Mutex
	m  map[types.UID]createdApp
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

// take returns and forgets what the resource's Create made, if it is recent
// and about the app with the given ID.
func (c *created) take(uid types.UID, appID string, now time.Time) (createdApp, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[uid]
	delete(c.m, uid)
	// Entries of resources whose Observe never came are dropped as they age.
	for k, v := range c.m {
		if now.Sub(v.at) > createdTTL {
			delete(c.m, k)
		}
	}
	return a, ok && a.app.ID == appID && now.Sub(a.at) <= createdTTL
}
