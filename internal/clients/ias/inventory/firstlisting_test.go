package inventory_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// TestFirstListingReleasesPageByPage: after StartListing, a resource waiting for
// its app goes on when the page that shows the app comes, not after the last
// page; its observe reads the app at once; an app no page shows is released
// when the listing ends; then nothing waits any more.
func TestFirstListingReleasesPageByPage(t *testing.T) {
	const latency = 150 * time.Millisecond
	sim, err := iassim.New(iassim.Options{RateLimit: -1, Latency: latency}).Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	ids := make([]string, 250) // three pages
	for i := range ids {
		ids[i] = sim.AddApp(iassim.App{Name: uuid.NewString()})
	}
	reg := prometheus.NewRegistry()
	pool := inventory.New(ias.NewPool(ias.PoolOptions{}), inventory.NewMetrics(reg), nil)
	tenant := ias.Tenant{URL: sim.URL, Username: "admin", Password: "admin-password", QPS: 1000, Burst: 100}

	start := time.Now()
	if err := pool.StartListing(tenant); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		released = map[string]time.Duration{}
		wg       sync.WaitGroup
	)
	unknown := uuid.NewString()
	for _, id := range append(ids, unknown) {
		wg.Add(1)
		if !pool.WhenListed(id, func() {
			mu.Lock()
			released[id] = time.Since(start)
			mu.Unlock()
			wg.Done()
		}) {
			t.Fatalf("app %s does not wait for the first listing", id)
		}
	}
	if got := gauge(t, reg); got != float64(len(ids)+1) {
		t.Errorf("waiting gauge %v, want %d", got, len(ids)+1)
	}

	// The first app released is read from the listing under way, at once.
	c, err := pool.Client(tenant)
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for first == "" {
		mu.Lock()
		for id := range released {
			first = id
		}
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	read := time.Now()
	if _, found, err := c.ListedApplication(context.Background(), first, time.Hour); err != nil || !found {
		t.Fatalf("the released app is not read from the listing under way: found %v, %v", found, err)
	}
	if took := time.Since(read); took > latency/2 {
		t.Errorf("reading a released app waited %s for the rest of the listing", took)
	}

	wg.Wait()
	earliest, latest := time.Hour, time.Duration(0)
	for _, id := range ids {
		earliest, latest = min(earliest, released[id]), max(latest, released[id])
	}
	if latest-earliest < latency {
		t.Errorf("apps were released within %s of each other: not page by page (%s to %s)", latest-earliest, earliest, latest)
	}
	if released[unknown] < latest {
		t.Errorf("an app no page shows was released at %s, before the last page (%s)", released[unknown], latest)
	}
	if got := gauge(t, reg); got != 0 {
		t.Errorf("waiting gauge %v after the listing, want 0", got)
	}
	if pool.WhenListed(uuid.NewString(), func() { t.Error("called after the listing") }) {
		t.Error("a resource waits though no first listing runs")
	}
}

func gauge(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "eventing_auth_ias_first_listing_waiting" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no eventing_auth_ias_first_listing_waiting metric")
	return 0
}
