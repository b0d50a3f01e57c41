package runtimewatcher

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// echoes tells the events of the provider's own writes from the others. The
// skr-webhook is a validating webhook that posts its event and waits for the
// answer before it lets the runtime's API server go on
// (runtime-watcher/pkg/admissionreview/handler.go, sendRequestToKcp in
// validateResources), so the event of a write arrives while that write is in
// flight. One event per write in flight is taken as its echo; any further
// event is someone else's change and is reconciled. Should another change's
// event arrive first, the echo that follows is reconciled in its place, and
// that reconcile reads the Secret after both. A write that returned no
// longer waits for its echo: one that comes later is reconciled, which costs
// a read.
type echoes struct {
	mu sync.Mutex
	// inFlight counts, per RuntimeSecret, the writes to its Secret in flight;
	// awaited, those whose echo has not come.
	inFlight, awaited map[types.NamespacedName]int
}

func newEchoes() *echoes {
	return &echoes{inFlight: map[types.NamespacedName]int{}, awaited: map[types.NamespacedName]int{}}
}

// writing notes a write to the Secret of key; the returned func notes that it
// returned.
func (e *echoes) writing(key types.NamespacedName) (returned func()) {
	e.mu.Lock()
	e.inFlight[key]++
	e.awaited[key]++
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.inFlight[key]--; e.inFlight[key] <= 0 {
			delete(e.inFlight, key)
		}
		// Echoes are awaited only of writes still in flight.
		if n := min(e.awaited[key], e.inFlight[key]); n > 0 {
			e.awaited[key] = n
		} else {
			delete(e.awaited, key)
		}
	}
}

// take tells whether an event for key is the echo of a write in flight, and
// counts it as come.
func (e *echoes) take(key types.NamespacedName) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.awaited[key] <= 0 {
		return false
	}
	if e.awaited[key]--; e.awaited[key] == 0 {
		delete(e.awaited, key)
	}
	return true
}
