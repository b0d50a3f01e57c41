// Package recent holds what a controller remembers of each resource for a
// while: a fact learnt in one reconcile that spares a call in the next. Every
// such memory is a Memory: each entry lives for the memory's TTL, expired
// ones are swept as the memory is used, and it never holds more than its
// bound, so that no number of resources grows it beyond that.
package recent

import (
	"sync"
	"time"
)

// DefaultMax bounds a Memory unless its owner says otherwise: a bring-up or
// deletion of this many runtimes at once is remembered whole.
const DefaultMax = 10000

// A Memory maps keys to values for a TTL each (expired once it passed), holding at most Max entries.
// Time is passed in by the caller, so that a reconcile uses one now
// throughout and tests need no clock.
type Memory[K comparable, V any] struct {
	ttl time.Duration
	max int

	mu    sync.Mutex
	m     map[K]entry[V]
	swept time.Time
}

type entry[V any] struct {
	v  V
	at time.Time
}

// New returns a Memory whose entries live for ttl, at most max of them
// (DefaultMax if max is not positive).
func New[K comparable, V any](ttl time.Duration, max int) *Memory[K, V] {
	if max <= 0 {
		max = DefaultMax
	}
	return &Memory[K, V]{ttl: ttl, max: max, m: map[K]entry[V]{}}
}

// Put remembers v under k as of now. When the memory is full, the expired
// entries go first, then, if none had, any one: each entry only spares a
// call, and losing one costs that call.
func (r *Memory[K, V]) Put(k K, v V, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked(now, false)
	if _, ok := r.m[k]; !ok && len(r.m) >= r.max {
		r.sweepLocked(now, true)
		for victim := range r.m {
			if len(r.m) < r.max {
				break
			}
			delete(r.m, victim)
		}
	}
	r.m[k] = entry[V]{v: v, at: now}
}

// Get returns what is remembered under k, if it is not older than the TTL at
// now.
func (r *Memory[K, V]) Get(k K, now time.Time) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked(now, false)
	e, ok := r.m[k]
	if !ok || now.Sub(e.at) >= r.ttl {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Delete forgets k.
func (r *Memory[K, V]) Delete(k K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, k)
}

// Len is how many entries are held, expired ones not yet swept included.
func (r *Memory[K, V]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.m)
}

// sweepLocked drops the expired entries, at most once a TTL unless forced
// (a full memory): an entry outlives its TTL by at most one more.
func (r *Memory[K, V]) sweepLocked(now time.Time, force bool) {
	if !force && now.Sub(r.swept) < r.ttl {
		return
	}
	r.swept = now
	for k, e := range r.m {
		if now.Sub(e.at) >= r.ttl {
			delete(r.m, k)
		}
	}
}
