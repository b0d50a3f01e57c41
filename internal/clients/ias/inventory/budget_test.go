package inventory_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// TestNamespacesShareOneBudget: 20 namespaces' ProviderConfigs, each with a
// user of its own, at a tenant of 3,000 apps with long descriptions (about
// 9 MiB held per copy), all listed at once as after a restart: together they
// never hold more than the budget, no more than its listings run at once,
// and the platform's inventory of the same tenant is listed whole beside them.
func TestNamespacesShareOneBudget(t *testing.T) {
	sim, platform := serve(t)
	long := strings.Repeat("d", 3000)
	for i := range 3000 {
		sim.AddApp(iassim.App{Name: fmt.Sprintf("app-%d", i), Description: long})
	}
	const maxBytes = 16 << 20
	budget := inventory.NewBudget(maxBytes, 2)
	tenants := inventory.New(ias.NewPool(ias.PoolOptions{}), nil, budget)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		peak int64
	)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				mu.Lock()
				peak = max(peak, budget.Held())
				mu.Unlock()
			}
		}
	}()
	over := 0
	for i := range 20 {
		c := namespacedClient(t, sim, tenants, platform, i)
		wg.Go(func() {
			if _, _, err := c.ListedApplication(context.Background(), "x", time.Hour); err != nil {
				mu.Lock()
				over++
				mu.Unlock()
			}
		})
	}
	p, err := tenants.Client(platform)
	if err != nil {
		t.Fatal(err)
	}
	ids := sim.Apps()
	if _, found, err := p.ListedApplication(context.Background(), ids[2999].ID, time.Hour); err != nil || !found {
		t.Errorf("the platform's inventory beside the namespaces: found %v, %v", found, err)
	}
	wg.Wait()
	close(done)
	t.Logf("peak held by namespaces %d MiB of %d MiB; %d of 20 listings stopped at the budget", peak>>20, maxBytes>>20, over)
	if peak > maxBytes {
		t.Errorf("namespaces held %d bytes, more than the budget of %d", peak, maxBytes)
	}
	if over == 0 {
		t.Errorf("20 copies of a tenant of %d MiB each fit a budget of %d MiB", 9, maxBytes>>20)
	}
	if got := budget.Held(); got > maxBytes {
		t.Errorf("afterwards namespaces hold %d bytes", got)
	}
}

// TestNoOneWaitsForANamespacesTurn: while every turn of the namespaces'
// budget is taken by a slow listing, another namespace's lookup does not wait
// for a turn (its worker would be held): it is told to read the app itself.
// A namespace's first listing holds back no one's first reconcile.
func TestNoOneWaitsForANamespacesTurn(t *testing.T) {
	sim, platform := serve(t)
	for i := range 300 {
		sim.AddApp(iassim.App{Name: fmt.Sprintf("app-%d", i)})
	}
	sim.SetLatency(200 * time.Millisecond)
	tenants := inventory.New(ias.NewPool(ias.PoolOptions{}), nil, inventory.NewBudget(0, 1))
	namespaced := func(i int) inventory.Client { return namespacedClient(t, sim, tenants, platform, i) }
	slow := namespaced(0)
	listing := make(chan struct{})
	go func() {
		defer close(listing)
		_, _, _ = slow.ListedApplication(context.Background(), "x", time.Hour)
	}()
	time.Sleep(100 * time.Millisecond) // the slow listing holds the one turn
	start := time.Now()
	_, found, err := namespaced(1).ListedApplication(context.Background(), sim.Apps()[0].ID, time.Hour)
	if d := time.Since(start); d > 150*time.Millisecond || found || err != nil {
		t.Errorf("a lookup while every turn is taken: found %v, err %v after %v; want not found, no error, at once", found, err, d)
	}
	<-listing

	ns := platform
	ns.Username, ns.Password, ns.Namespace = "user-late", "pw-late", "tenant-late"
	sim.AddUser(ns.Username, ns.Password)
	if err := tenants.StartListing(ns); err != nil {
		t.Fatal(err)
	}
	if tenants.WhenListed(sim.Apps()[0].ID, func() {}) {
		t.Error("a namespace's first listing holds back a first reconcile")
	}
}

// namespacedClient is the client of namespace tenant-<i>'s config, with a user
// of its own at the platform's tenant.
func namespacedClient(t *testing.T, sim *iassim.Running, tenants *inventory.Tenants, platform ias.Tenant, i int) inventory.Client {
	t.Helper()
	ns := platform
	ns.Username, ns.Password, ns.Namespace = fmt.Sprintf("user-%d", i), fmt.Sprintf("pw-%d", i), fmt.Sprintf("tenant-%d", i)
	sim.AddUser(ns.Username, ns.Password)
	c, err := tenants.Client(ns)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
