package ias_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// TestListingsEnd: a listing that never ends stops with an error naming the
// tenant and the listing, after a bounded number of pages: at once for a
// cursor sent before, after the limit the tenant's last listed size gives for
// fresh cursors.
func TestListingsEnd(t *testing.T) {
	cases := map[string]struct {
		reason    string
		kind      string
		filter    string
		listFirst int // apps in the tenant, listed once before
		wantPages int
		wantWords string
	}{
		"repeated cursor, lookup":                {reason: "a tenant that sends a cursor again would page forever: the lookup stops at once", kind: iassim.EndlessRepeat, filter: "name eq runtime-x", wantPages: 2, wantWords: "a cursor it had sent before"},
		"fresh cursors, lookup, never listed":    {reason: "fresh cursors without end stop at the page limit", kind: iassim.EndlessFresh, filter: "name eq runtime-x", wantPages: testMaxPages, wantWords: "more pages than"},
		"fresh cursors, lookup, 250 apps listed": {reason: "the limit grows with the tenant's size as last listed", kind: iassim.EndlessFresh, filter: "name eq runtime-x", listFirst: 250, wantPages: 2*3 + 10, wantWords: "more pages than"},
		"fresh cursors, listing of all, 0 apps":  {reason: "the listing of all applications is bounded the same way", kind: iassim.EndlessFresh, listFirst: -1, wantPages: testMaxPages, wantWords: "listing of all applications"},
		"cursors of 3 MiB":                       {reason: "a page too large is not read, whatever it holds", kind: iassim.EndlessHugeCursor, wantPages: 1, wantWords: "larger than 1 MiB"},
		"the same 100 apps on every page":        {reason: "pages that repeat the same apps end at the limit too", kind: iassim.EndlessSameApps, wantPages: testMaxPages, wantWords: "more pages than"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sim, c := startWith(t, iassim.Options{}, ias.PoolOptions{MaxPages: testMaxPages})
			for range tc.listFirst {
				sim.AddApp(iassim.App{Name: "other"})
			}
			if tc.listFirst > 0 {
				if err := c.ListApplications(context.Background(), func([]ias.Application) {}); err != nil {
					t.Fatalf("%s\n%v", tc.reason, err)
				}
			}
			sim.ResetStats()
			sim.SetEndlessPages(tc.filter, tc.kind)
			var err error
			if tc.filter == "" {
				err = c.ListApplications(context.Background(), func([]ias.Application) {})
			} else {
				_, err = c.FindApplications(context.Background(), "runtime-x")
			}
			var pl *ias.PageLimitError
			var tl *ias.TooLargeError
			switch {
			case errors.As(err, &tl):
				// A page over MaxPageBytes is not read, whatever it holds.
				if !strings.Contains(err.Error(), tc.wantWords) {
					t.Fatalf("%s\ngot %v, want it to say %q", tc.reason, err, tc.wantWords)
				}
			case !errors.As(err, &pl) || !strings.Contains(err.Error(), sim.URL) || !strings.Contains(err.Error(), tc.wantWords):
				t.Fatalf("%s\ngot %v, want a page limit error naming %s and saying %q", tc.reason, err, sim.URL, tc.wantWords)
			}
			// The simulator counts a request once it has answered it, and a
			// page refused unread may still be on its way out.
			pages := func() int { return sim.Stats().Count(operation.ListApplications, 0) }
			for deadline := time.Now().Add(2 * time.Second); pages() < tc.wantPages && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if got := pages(); got != tc.wantPages {
				t.Errorf("%s\n%d pages requested, want %d", tc.reason, got, tc.wantPages)
			}
		})
	}
}

// TestPaddingRaisesNoLimit: a listing stopped at its page limit by pages that
// repeat the same apps raises the next listing's limit only by the distinct
// apps it read (100: 2 pages plus the margin), not by the pages.
func TestPaddingRaisesNoLimit(t *testing.T) {
	sim, c := startWith(t, iassim.Options{}, ias.PoolOptions{MaxPages: testMaxPages})
	sim.SetEndlessPages("", iassim.EndlessSameApps)
	for _, want := range []int{testMaxPages, 2*1 + 10} {
		sim.ResetStats()
		if err := c.ListApplications(context.Background(), func([]ias.Application) {}); !errors.As(err, new(*ias.PageLimitError)) {
			t.Fatalf("ListApplications() = %v, want a page limit error", err)
		}
		if got := sim.Stats().Count(operation.ListApplications, 0); got != want {
			t.Errorf("%d pages requested, want %d", got, want)
		}
	}
}

// TestListingAfterGrowth: a tenant that grew past the page limit its last
// listing gives (a bring-up of thousands of runtimes between two listings)
// stops the next listing at that limit, and the one after it reads the whole
// tenant: the limit rises with what the stopped listing read.
func TestListingAfterGrowth(t *testing.T) {
	sim, c := startWith(t, iassim.Options{}, ias.PoolOptions{MaxPages: testMaxPages})
	sim.AddApp(iassim.App{Name: "first"})
	list := func() (int, error) {
		n := 0
		err := c.ListApplications(context.Background(), func(page []ias.Application) { n += len(page) })
		return n, err
	}
	if _, err := list(); err != nil {
		t.Fatal(err)
	}
	const grown = 1500 // 15 pages, past the 2*1 + 10 the one-app listing allows
	for range grown - 1 {
		sim.AddApp(iassim.App{Name: "other"})
	}
	var pl *ias.PageLimitError
	if _, err := list(); !errors.As(err, &pl) {
		t.Fatalf("the listing right after the growth: %v, want a page limit error", err)
	}
	n, err := list()
	if err != nil || n != grown {
		t.Errorf("the listing after it: %d apps, %v; want all %d", n, err, grown)
	}
}

// testMaxPages is the page limit of a tenant not yet listed, in these tests.
const testMaxPages = 50

// TestAnswersBounded: a body past ias.MaxAnswerBytes is refused with an error
// naming the operation, for an app's GET and the well-known document.
func TestAnswersBounded(t *testing.T) {
	sim, c := start(t, iassim.Options{}, false)
	id := sim.AddApp(iassim.App{Name: "runtime-x"})
	sim.SetOversized(id, 64<<20)
	sim.SetOversized(iassim.WellKnownTarget, 64<<20)
	_, err := c.GetApplication(context.Background(), id)
	var tl *ias.TooLargeError
	if !errors.As(err, &tl) || tl.Operation != operation.GetApplication {
		t.Errorf("GET of a 64 MiB app: %v, want a TooLargeError of %s", err, operation.GetApplication)
	}
	_, err = c.Endpoints(context.Background())
	if !errors.As(err, &tl) || tl.Operation != operation.WellKnown {
		t.Errorf("64 MiB well-known document: %v, want a TooLargeError of %s", err, operation.WellKnown)
	}
	// Just under the limit is read.
	sim.SetOversized(id, ias.MaxAnswerBytes-128<<10)
	if _, err := c.GetApplication(context.Background(), id); err != nil {
		t.Errorf("GET of an app just under the limit: %v", err)
	}
}

// TestFilterNames: a name that would change the filter is refused before any
// call; names of runtimes and Kubernetes objects are looked up.
func TestFilterNames(t *testing.T) {
	sim, c := start(t, iassim.Options{}, false)
	for name, ok := range map[string]bool{
		"3f1c9a2e-5b7d-4e8f-9a01-23456789abcd": true,
		"kyma.runtime_1:a":                     true,
		"a or name eq b":                       false,
		"x%20or%20id%20eq%20y":                 false,
		"\"quoted\"":                           false,
		"":                                     false,
		strings.Repeat("a", 248):               false,
	} {
		sim.ResetStats()
		_, err := c.FindApplications(context.Background(), name)
		if ok != (err == nil) {
			t.Errorf("FindApplications(%q): %v, want ok %v", name, err, ok)
		}
		if calls := sim.Stats().Count(operation.ListApplications, 0); !ok && calls != 0 {
			t.Errorf("FindApplications(%q) sent %d requests, want none", name, calls)
		}
	}
}
