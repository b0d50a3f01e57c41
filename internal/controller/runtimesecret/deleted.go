package runtimesecret

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"
)

// deletedMemory is how many deletions deletedSecrets remembers: far more than
// are ever between their two reconciles at once.
const deletedMemory = 4096

// deletedSecrets remembers the RuntimeSecrets, by UID, whose Secret this
// process deleted on the runtime during their deletion. crossplane-runtime
// observes once more after a successful Delete before it removes the
// finalizer; that observation needs no call to the runtime. At hundreds of
// deletions at once the runtime's client has left the cache by then, so asking
// would cost a new client, a full TLS handshake and a GET per runtime. After
// a restart nothing is remembered and the runtime is asked.
type deletedSecrets struct{ uids *lru.Cache }

func newDeletedSecrets() *deletedSecrets { return &deletedSecrets{uids: lru.New(deletedMemory)} }

func (d *deletedSecrets) add(uid types.UID) {
	if d != nil {
		d.uids.Add(uid, struct{}{})
	}
}

func (d *deletedSecrets) has(uid types.UID) bool {
	if d == nil {
		return false
	}
	_, ok := d.uids.Get(uid)
	return ok
}
