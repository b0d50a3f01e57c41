// Package gcheadroom sets Go's garbage collector target with a floor: at least
// a fixed amount of garbage between collections, on top of a percentage of the
// live heap.
//
// GOGC alone scales the garbage allowed with the live heap. The provider's heap
// is mostly its informer cache, so at 10,000 runtimes a low percentage keeps the
// resident memory in budget; with a few hundred runtimes the same percentage
// allows only a few MB of garbage, and the reconciles' short-lived decoding
// buffers made the collector run several times a second during a bring-up. A
// floor lets a small heap collect as rarely as a large one does, and costs
// nothing where the percentage already allows more.
package gcheadroom

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// maxPercent bounds the percentage the floor may ask for, for a live heap of
// almost nothing (right after start).
const maxPercent = 2000

// Keep sets the collector's target to percent of the live heap, and to at least
// floor bytes above it. It re-checks after every collection, from then on.
func Keep(percent int, floor uint64) {
	t := &tuner{percent: percent, floor: floor, set: percent,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	debug.SetGCPercent(percent)
	t.arm()
}

// tuner is only used by its sentinels' finalizers, which Go runs one at a
// time.
type tuner struct {
	percent int
	floor   uint64
	set     int // the percentage last set
	sample  []metrics.Sample
}

// sentinel is garbage as soon as it is made; its finalizer runs after the
// collection that found it and arms the next one.
type sentinel struct{ t *tuner }

func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{t: t}, func(s *sentinel) {
		s.t.tune()
		s.t.arm()
	})
}

// tune sets the percentage that gives the live heap at least floor bytes of
// headroom, when it differs by more than a tenth from the one set.
func (t *tuner) tune() {
	metrics.Read(t.sample)
	want := Percent(t.percent, t.floor, t.sample[0].Value.Uint64())
	if d := want - t.set; d*10 > t.set || -d*10 > t.set {
		debug.SetGCPercent(want)
		t.set = want
	}
}

// Percent is the GOGC percentage for a live heap of live bytes: percent, or
// what leaves floor bytes above live, whichever is larger, at most maxPercent.
func Percent(percent int, floor, live uint64) int {
	if live == 0 {
		return max(percent, maxPercent)
	}
	need := floor * 100 / live
	if need > maxPercent {
		return max(percent, maxPercent)
	}
	return max(percent, int(need))
}
