package iasapplication

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// deletedTTL is how long a Delete's success stands in for IAS: long enough
// for the Observe crossplane-runtime runs after every Delete, even behind a
// mass deletion's queue.
const deletedTTL = 5 * time.Minute

// deleted remembers, per resource, the app its Delete removed from IAS, so the
// Observe that follows need not ask IAS whether the app is gone: a deletion
// costs IAS one call. Lost at a restart, which costs one more DELETE (a 404).
type deleted struct {
	mu sync.Mutex
	m  map[types.UID]deletedApp
}

type deletedApp struct {
	id string
	at time.Time
}

func (d *deleted) put(uid types.UID, appID string, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[types.UID]deletedApp{}
	}
	d.m[uid] = deletedApp{id: appID, at: now}
}

// gone tells whether the resource's Delete removed the app with the given ID
// lately. Entries age out, so the map holds at most a few minutes' deletions.
func (d *deleted) gone(uid types.UID, appID string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, v := range d.m {
		if now.Sub(v.at) > deletedTTL {
			delete(d.m, k)
		}
	}
	a, ok := d.m[uid]
	return ok && a.id == appID
}

// len is how many deletions are remembered.
func (d *deleted) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.m)
}
