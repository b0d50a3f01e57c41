package runtimesecret

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
)

// Watcher is what a RuntimeSecret needs of the runtime-watcher listener
// (runtimewatcher.Listener): whether a runtime's event brought its reconcile,
// a repair counted so that a fight is told, and its own writes announced, so
// that their echoes bring no reconcile.
type Watcher interface {
	TookEvent(key types.NamespacedName) bool
	Repairing(key types.NamespacedName, fromEvent bool) runtimewatcher.Fight
	OwnWrite(key types.NamespacedName) (done func(written bool))
}

// NoWatcher is the Watcher while the listener is off: no event brings a
// reconcile, and no fight is told.
type NoWatcher struct{}

// TookEvent is false: no event came.
func (NoWatcher) TookEvent(types.NamespacedName) bool { return false }

// Repairing tells of no fight.
func (NoWatcher) Repairing(types.NamespacedName, bool) runtimewatcher.Fight {
	return runtimewatcher.Fight{}
}

// OwnWrite notes nothing.
func (NoWatcher) OwnWrite(types.NamespacedName) func(bool) { return func(bool) {} }
