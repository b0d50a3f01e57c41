package iasapplication

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/recent"
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
	apps *recent.Memory[types.UID, createdApp]
	// tried holds the resources this process sent a create for, answered or
	// not.
	tried *recent.Memory[types.UID, struct{}]
}

func newCreated() *created {
	return &created{apps: recent.New[types.UID, createdApp](createdTTL, 0), tried: recent.New[types.UID, struct{}](createdTTL, 0)}
}

// noteCreateSent records that a create of the resource's app is sent now.
func (c *created) noteCreateSent(uid types.UID, now time.Time) {
	c.tried.Put(uid, struct{}{}, now)
}

// triedLately tells whether this process sent a create for the resource
// within createdTTL: only then may the cache lag behind the record of that
// create. A create by an earlier process was recorded before it ended, and
// the cache was filled after.
func (c *created) triedLately(uid types.UID, now time.Time) bool {
	_, ok := c.tried.Get(uid, now)
	return ok
}

// createdApp is what a Create made: the app and its one secret, value included
// (it is in the connection Secret already; kept in memory only).
type createdApp struct {
	app    ias.Application
	secret ias.APISecret
	at     time.Time
}

func (c *created) put(uid types.UID, a createdApp) {
	c.apps.Put(uid, a, a.at)
}

// recall returns what the resource's Create made, if it is recent and about
// the app with the given ID, until the resource's status records an Observe
// (observed: status.atProvider.secretsCheckedAt, which a Create does not set).
// Until then a status write lost to a conflict (core, the Usage controller and
// the provider all write a composed resource during bring-up) costs no IAS
// calls.
func (c *created) recall(uid types.UID, appID string, observed bool, now time.Time) (createdApp, bool) {
	a, ok := c.apps.Get(uid, now)
	if !ok || a.app.ID != appID || observed {
		c.apps.Delete(uid)
		return createdApp{}, false
	}
	return a, true
}
