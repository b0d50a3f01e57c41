package runtimesecret

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/provider-eventing-auth/internal/recent"
)

// deletedFor is how long a deletion is remembered: long enough for the
// Observe crossplane-runtime runs after every Delete, even behind a mass
// deletion's queue.
const deletedFor = 5 * time.Minute

// deletedSecrets remembers the RuntimeSecrets, by UID, whose Secret this
// process deleted on the runtime during their deletion. crossplane-runtime
// observes once more after a successful Delete before it removes the
// finalizer; that observation needs no call to the runtime. At hundreds of
// deletions at once the runtime's client has left the cache by then, so asking
// would cost a new client, a full TLS handshake and a GET per runtime. After
// a restart nothing is remembered and the runtime is asked.
type deletedSecrets struct {
	uids *recent.Memory[types.UID, struct{}]
}

func newDeletedSecrets() *deletedSecrets {
	return &deletedSecrets{uids: recent.New[types.UID, struct{}](deletedFor, 0)}
}

func (d *deletedSecrets) add(uid types.UID) {
	if d != nil {
		d.uids.Put(uid, struct{}{}, time.Now())
	}
}

func (d *deletedSecrets) has(uid types.UID) bool {
	if d == nil {
		return false
	}
	_, ok := d.uids.Get(uid, time.Now())
	return ok
}
