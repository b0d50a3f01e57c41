package inventory_test

import (
	"context"
	"testing"
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// serve serves a simulator and returns the tenant that reaches it.
func serve(t *testing.T) (*iassim.Running, ias.Tenant) {
	t.Helper()
	sim, err := iassim.New(iassim.Options{RateLimit: -1}).Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return sim, ias.Tenant{URL: sim.URL, Username: "admin", Password: "admin-password", QPS: 1000, Burst: 100}
}

// listed tells whether the tenant's inventory, at most maxAge old, shows the app.
func listed(t *testing.T, c inventory.Client, id string, maxAge time.Duration) bool {
	t.Helper()
	_, found, err := c.ListedApplication(context.Background(), id, maxAge)
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestInventoryServesWhileRefreshing: polls read the listing at hand at once;
// a stale one is replaced in the background, and the replacement shows apps
// deleted meanwhile as gone.
func TestInventoryServesWhileRefreshing(t *testing.T) {
	sim, tenant := serve(t)
	c, err := inventory.New(ias.NewPool(ias.PoolOptions{}), nil, nil).Client(tenant)
	if err != nil {
		t.Fatal(err)
	}
	keep := sim.AddApp(iassim.App{Name: "keep"})
	gone := sim.AddApp(iassim.App{Name: "gone"})
	if !listed(t, c, gone, time.Hour) || !listed(t, c, keep, time.Hour) {
		t.Fatal("the first inventory lacks an app")
	}
	sim.DeleteApp(gone)
	sim.SetLatency(300 * time.Millisecond)
	start := time.Now()
	if !listed(t, c, gone, 0) {
		t.Fatal("a stale inventory was not served")
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Fatalf("a stale inventory was not served at once (took %s)", took)
	}
	deadline := time.Now().Add(5 * time.Second)
	for listed(t, c, gone, time.Hour) {
		if time.Now().After(deadline) {
			t.Fatal("the inventory was not refreshed in the background")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !listed(t, c, keep, time.Hour) {
		t.Fatal("the refreshed inventory lost an app that exists")
	}
}

// TestNewCredentialsListAfresh: what the old credentials listed is not read
// with new ones, however young: the tenant is listed again.
func TestNewCredentialsListAfresh(t *testing.T) {
	sim, tenant := serve(t)
	tenants := inventory.New(ias.NewPool(ias.PoolOptions{}), nil, nil)
	old, err := tenants.Client(tenant)
	if err != nil {
		t.Fatal(err)
	}
	gone := sim.AddApp(iassim.App{Name: "gone"})
	if !listed(t, old, gone, time.Hour) {
		t.Fatal("the first inventory lacks the app")
	}
	sim.DeleteApp(gone)
	if !listed(t, old, gone, time.Hour) {
		t.Fatal("a young inventory was listed again with the same credentials")
	}

	sim.SetCredentials("second", "second-password")
	tenant.Username, tenant.Password = "second", "second-password"
	changed, err := tenants.Client(tenant)
	if err != nil {
		t.Fatal(err)
	}
	if listed(t, changed, gone, time.Hour) {
		t.Error("new credentials read the inventory listed with the old ones")
	}
}

// TestOwnChangesAreNotReadBackStale: an app this process patched or deleted is
// not answered from a listing that began before the change may show in IAS's
// lists, also for other credentials on the same tenant; other apps still are.
func TestOwnChangesAreNotReadBackStale(t *testing.T) {
	sim, tenant := serve(t)
	tenants := inventory.New(ias.NewPool(ias.PoolOptions{}), nil, nil)
	c, err := tenants.Client(tenant)
	if err != nil {
		t.Fatal(err)
	}
	patched := sim.AddApp(iassim.App{Name: "patched", Description: "before"})
	deleted := sim.AddApp(iassim.App{Name: "deleted"})
	untouched := sim.AddApp(iassim.App{Name: "untouched"})
	for _, id := range []string{patched, deleted, untouched} {
		if !listed(t, c, id, time.Hour) {
			t.Fatalf("the first inventory lacks %s", id)
		}
	}
	if err := c.PatchApplication(context.Background(), patched, []ias.Patch{{Path: "/description", Value: "after"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteApplication(context.Background(), deleted); err != nil {
		t.Fatal(err)
	}
	sim.SetCredentials("second", "second-password")
	tenant.Username, tenant.Password = "second", "second-password"
	other, err := tenants.Client(tenant)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name string
		c    inventory.Client
	}{{"the same credentials", c}, {"other credentials", other}} {
		if listed(t, r.c, patched, time.Hour) || listed(t, r.c, deleted, time.Hour) {
			t.Errorf("%s read an app changed since from a listing made before", r.name)
		}
		if !listed(t, r.c, untouched, time.Hour) {
			t.Errorf("%s lost an app nobody changed", r.name)
		}
	}
}
