package inventory

import (
	"sync"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// firstListings lets the first reconcile of each resource after a start wait,
// without holding a worker, for the tenant's first listing to show its app.
// A start observes every resource at once, and each observe reads the listing:
// waiting for all of it (a hundred apps a page, one page after another) held
// every worker idle until the last page, then observed everything.
type firstListings struct {
	metrics *Metrics

	mu      sync.Mutex
	running int
	listed  map[string]struct{}
	waiting map[string][]func()
}

// begin records that a first listing of a tenant started.
func (f *firstListings) begin() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running == 0 {
		f.listed, f.waiting = map[string]struct{}{}, map[string][]func(){}
	}
	f.running++
}

// end records that a first listing ended, as it did. Once none runs, whoever
// still waits goes on: their app is in no listing, or the listing failed, and
// their observe will say so.
func (f *firstListings) end() {
	f.mu.Lock()
	f.running--
	var release [][]func()
	if f.running == 0 {
		for _, fns := range f.waiting {
			release = append(release, fns)
		}
		f.listed, f.waiting = nil, nil
	}
	f.mu.Unlock()
	f.run(release)
}

// page records the apps a page of a first listing showed and lets those who
// wait for them go on.
func (f *firstListings) page(apps []ias.Application) {
	f.mu.Lock()
	if f.running == 0 {
		f.mu.Unlock()
		return
	}
	var release [][]func()
	for _, a := range apps {
		f.listed[a.ID] = struct{}{}
		if fns, ok := f.waiting[a.ID]; ok {
			release = append(release, fns)
			delete(f.waiting, a.ID)
		}
	}
	f.mu.Unlock()
	f.run(release)
}

// whenListed calls fn once a first listing showed the app with the UUID, or
// once none runs any more, and tells whether it will; false: no first listing
// runs or it already showed the app, and fn is not called.
func (f *firstListings) whenListed(id string, fn func()) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running == 0 {
		return false
	}
	if _, ok := f.listed[id]; ok {
		return false
	}
	f.waiting[id] = append(f.waiting[id], fn)
	f.metrics.firstListingWaits.Inc()
	return true
}

func (f *firstListings) run(release [][]func()) {
	for _, fns := range release {
		for _, fn := range fns {
			f.metrics.firstListingWaits.Dec()
			fn()
		}
	}
}
