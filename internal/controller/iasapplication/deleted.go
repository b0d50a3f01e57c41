package iasapplication

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/provider-eventing-auth/internal/recent"
)

// deletedTTL is how long a Delete's success stands in for IAS: long enough
// for the Observe crossplane-runtime runs after every Delete, even behind a
// mass deletion's queue.
const deletedTTL = 5 * time.Minute

// deleted remembers, per resource, the app its Delete removed from IAS, so the
// Observe that follows need not ask IAS whether the app is gone: a deletion
// costs IAS one call. Lost at a restart, which costs one more DELETE (a 404).
type deleted struct {
	apps *recent.Memory[types.UID, string]
}

func newDeleted() *deleted { return &deleted{apps: recent.New[types.UID, string](deletedTTL, 0)} }

func (d *deleted) put(uid types.UID, appID string, now time.Time) {
	d.apps.Put(uid, appID, now)
}

// gone tells whether the resource's Delete removed the app with the given ID
// lately.
func (d *deleted) gone(uid types.UID, appID string, now time.Time) bool {
	id, ok := d.apps.Get(uid, now)
	return ok && id == appID
}

// len is how many deletions are remembered.
func (d *deleted) len() int { return d.apps.Len() }
