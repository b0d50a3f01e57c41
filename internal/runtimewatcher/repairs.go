package runtimewatcher

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
)

// How a fight over a runtime's Secret is told and slowed: someone else (a
// person, a script, another controller) changes it again and again, and each
// repair would be undone at once. Repairing at full speed would spend the
// runtime's API and a worker on nothing, so from the FightAfter-th change
// within FightWindow on, the repair an event brings waits, from FightDelay
// doubling with each further change up to FightMaxDelay (the default poll,
// which repairs anyway). Only that runtime's repairs wait: the wait is an
// enqueue delay, no worker holds it.
const (
	FightWindow   = time.Minute
	FightAfter    = 3
	FightDelay    = time.Second
	FightMaxDelay = 5 * time.Minute
	// pendingFor is how long an event counts as what brought the next
	// reconcile of its RuntimeSecret: far past the settle delay.
	pendingFor = time.Minute
)

// Fight is what a change by someone else means for the RuntimeSecret's repairs.
type Fight struct {
	// Changes by someone else in a row, each within the window of the one before.
	Changes int
	// Wait is how long the next repair an event brings waits; 0 outside a fight.
	Wait time.Duration
	// Started tells that this change started a fight.
	Started bool
	// Window is how soon after the one before a change counts towards a
	// fight, and MaxDelay how long a repair waits at most: what a person
	// told of the fight needs to know.
	Window, MaxDelay time.Duration
}

// repairs remembers, per RuntimeSecret, whether an event waits to be
// reconciled and how often its Secret was changed by someone else lately.
// Both memories expire, so it holds only the RuntimeSecrets of the last few
// minutes' events and fights, never one per resource for good.
type repairs struct {
	clock   clock.Clock
	mu      sync.Mutex
	pending *cache.Expiring // types.NamespacedName -> struct{}
	fights  *cache.Expiring // types.NamespacedName -> fightState
}

type fightState struct {
	changes   int
	notBefore time.Time
}

func newRepairs(c clock.Clock) *repairs {
	return &repairs{clock: c, pending: cache.NewExpiringWithClock(c), fights: cache.NewExpiringWithClock(c)}
}

// eventArrived notes an event for key and returns how long its reconcile
// waits beyond the settle delay: 0 unless key is in a fight.
func (r *repairs) eventArrived(key types.NamespacedName) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending.Set(key, struct{}{}, pendingFor)
	if v, ok := r.fights.Get(key); ok {
		return max(v.(fightState).notBefore.Sub(r.clock.Now()), 0)
	}
	return 0
}

// takeEvent tells whether an event for key waited for this reconcile, and
// forgets it.
func (r *repairs) takeEvent(key types.NamespacedName) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.pending.Get(key)
	if ok {
		r.pending.Delete(key)
	}
	return ok
}

// changed records a change of key's Secret by someone else.
func (r *repairs) changed(key types.NamespacedName) Fight {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	f := fightState{}
	if v, ok := r.fights.Get(key); ok {
		f = v.(fightState)
	}
	f.changes++
	out := Fight{Changes: f.changes, Started: f.changes == FightAfter, Window: FightWindow, MaxDelay: FightMaxDelay}
	if f.changes >= FightAfter {
		out.Wait = FightMaxDelay
		if shift := f.changes - FightAfter; shift < 20 {
			out.Wait = min(FightDelay<<shift, FightMaxDelay)
		}
		f.notBefore = now.Add(out.Wait)
	}
	// The fight, or the count towards one, ends when no change follows
	// within the window, or within twice the wait once waits are long.
	r.fights.Set(key, f, max(FightWindow, 2*out.Wait))
	return out
}
