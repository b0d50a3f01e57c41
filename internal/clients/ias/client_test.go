package ias_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// start serves a simulator and returns a client of it.
func start(t *testing.T, opts iassim.Options, useTLS bool) (*iassim.Running, ias.Client) {
	t.Helper()
	return serve(t, opts, useTLS, ias.PoolOptions{})
}

// startWith serves a simulator without TLS and returns a client of a Pool
// with these options.
func startWith(t *testing.T, opts iassim.Options, po ias.PoolOptions) (*iassim.Running, ias.Client) {
	t.Helper()
	return serve(t, opts, false, po)
}

func serve(t *testing.T, opts iassim.Options, useTLS bool, po ias.PoolOptions) (*iassim.Running, ias.Client) {
	t.Helper()
	opts.RateLimit = -1
	sim, err := iassim.New(opts).Serve("127.0.0.1:0", useTLS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	c, err := ias.NewPool(po).Client(ias.Tenant{URL: sim.URL, Username: "admin", Password: "admin-password", CABundle: sim.CAPEM, QPS: 1000, Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	return sim, c
}

func TestFindApplicationsPages(t *testing.T) {
	cases := map[string]struct {
		reason    string
		opts      iassim.Options
		namesakes int
		others    int
		wantLists int
	}{
		"none":                     {reason: "a name no app has is one listing", namesakes: 0, others: 3, wantLists: 1},
		"none, tenant answers 404": {reason: "some tenants answer an empty filter with 404: that is no app, not an error", opts: iassim.Options{EmptyFilter404: true}, namesakes: 0, others: 3, wantLists: 1},
		"one":                      {reason: "one namesake among many apps is one listing", namesakes: 1, others: 150, wantLists: 1},
		"exactly one page":         {reason: "a full page with no cursor ends the listing", namesakes: 100, wantLists: 1},
		"three pages":              {reason: "more namesakes than a page are followed through the cursors", namesakes: 250, others: 10, wantLists: 3},
		// A cursor is opaque: a tenant whose cursors are no UUIDs pages as well.
		"three pages, opaque cursors": {reason: "a cursor is opaque: a tenant whose cursors are no UUIDs pages as well", opts: iassim.Options{OpaqueCursors: true}, namesakes: 250, others: 10, wantLists: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sim, c := start(t, tc.opts, false)
			for range tc.others {
				sim.AddApp(iassim.App{Name: "other"})
			}
			for range tc.namesakes {
				sim.AddApp(iassim.App{Name: "runtime-x"})
			}
			apps, err := c.FindApplications(context.Background(), "runtime-x")
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if len(apps) != tc.namesakes {
				t.Fatalf("%s\nfound %d apps, want %d", tc.reason, len(apps), tc.namesakes)
			}
			if got := sim.Stats().Count(operation.ListApplications, 0); got != tc.wantLists {
				t.Fatalf("%s\n%d list calls, want %d", tc.reason, got, tc.wantLists)
			}
		})
	}
}

func TestClientOverHTTPSWithCABundle(t *testing.T) {
	sim, c := start(t, iassim.Options{}, true)
	id, err := c.CreateApplication(context.Background(), ias.ApplicationSpec{Name: "rt", DisplayName: "rt"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.CreateAPISecret(context.Background(), id, ias.SecretSpec{Description: "eventing-auth", AuthorizationScopes: []string{"oAuth"}})
	if err != nil {
		t.Fatal(err)
	}
	app, ok := sim.App(id)
	if !ok || s.ClientID != app.ClientID || s.Value != app.Secrets[0].Value || s.Hint != s.Value[:4] {
		t.Fatalf("secret does not match the simulator's app %s", id)
	}
	got, err := c.GetApplication(context.Background(), id)
	if err != nil || got.ClientID != app.ClientID || got.Type != ias.TypeCharged || got.SSOType != ias.SSOTypeOIDC {
		t.Fatalf("GetApplication = %+v, %v", got, err)
	}
	e, err := c.Endpoints(context.Background())
	if err != nil || e.TokenURL != sim.URL+"/oauth2/token" || e.CertsURL != sim.URL+"/oauth2/certs" {
		t.Fatalf("Endpoints = %+v, %v", e, err)
	}
	if err := c.DeleteApplication(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteApplication(context.Background(), id); !ias.IsNotFound(err) {
		t.Fatalf("deleting a gone app: %v, want a 404", err)
	}

	// Without the CA, TLS verification refuses the simulator's certificate.
	plain, _ := ias.NewPool(ias.PoolOptions{Attempts: 1}).Client(ias.Tenant{URL: sim.URL, Username: "admin", Password: "admin-password", QPS: 10, Burst: 1})
	if _, err := plain.FindApplications(context.Background(), "rt"); err == nil {
		t.Fatal("an unknown CA was trusted")
	}
}

// TestEachMethodNamesItsOperation: the metrics tell every operation apart, as
// each client method names its own.
func TestEachMethodNamesItsOperation(t *testing.T) {
	sim, err := iassim.New(iassim.Options{RateLimit: -1}).Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	reg := prometheus.NewRegistry()
	c, err := ias.NewPool(ias.PoolOptions{Metrics: ias.NewMetrics(reg)}).Client(ias.Tenant{URL: sim.URL, Username: "admin", Password: "admin-password", QPS: 1000, Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := c.CreateApplication(ctx, ias.ApplicationSpec{Name: "rt", DisplayName: "rt"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.CreateAPISecret(ctx, id, ias.SecretSpec{Description: "d", AuthorizationScopes: []string{"oAuth"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []func() error{
		func() error { _, err := c.FindApplications(ctx, "rt"); return err },
		func() error { _, err := c.GetApplication(ctx, id); return err },
		func() error { return c.PatchApplication(ctx, id, []ias.Patch{{Path: ias.PathDisplayName, Value: "x"}}) },
		func() error { _, err := c.ListAPISecrets(ctx, id); return err },
		func() error { return c.DeleteAPISecret(ctx, id, s.ID) },
		func() error { _, err := c.Endpoints(ctx); return err },
		func() error { return c.DeleteApplication(ctx, id) },
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		if f.GetName() != "eventing_auth_ias_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					got = append(got, l.GetValue())
				}
			}
		}
	}
	slices.Sort(got)
	want := []string{operation.CreateAPISecret, operation.CreateApplication, operation.DeleteAPISecret, operation.DeleteApplication,
		operation.GetApplication, operation.ListAPISecrets, operation.ListApplications, operation.PatchApplication, operation.WellKnown}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("operations in the metrics: %v, want %v", got, want)
	}
}

// TestStatesApart: a client made with credentials a tenant already has shares
// their state (with any rate limit); other credentials for the same URL get
// state of their own, and going back finds the first again.
func TestStatesApart(t *testing.T) {
	pool := ias.NewPool(ias.PoolOptions{})
	tenant := ias.Tenant{URL: "http://127.0.0.1:1", Username: "admin", Password: "one", QPS: 1, Burst: 1}
	otherPassword, otherRate := tenant, tenant
	otherPassword.Password = "two"
	otherRate.QPS = 2
	var got []uint64
	for _, tn := range []ias.Tenant{tenant, tenant, otherPassword, otherRate, tenant, otherPassword} {
		c, err := pool.Client(tn)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.Generation())
	}
	if want := []uint64{1, 1, 2, 1, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
}

// TestRatesApart: a ProviderConfig's own rate limit slows its calls only; all
// of a tenant's calls together stay within the tenant's budget.
func TestRatesApart(t *testing.T) {
	sim, err := iassim.New(iassim.Options{RateLimit: -1}).Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	id := sim.AddApp(iassim.App{Name: "runtime-x"})
	tenant := ias.Tenant{URL: sim.URL, Username: "admin", Password: "admin-password", QPS: 1000, Burst: 100}
	slowTenant := tenant
	slowTenant.QPS, slowTenant.Burst = 1, 1
	calls := func(c ias.Client, n int) time.Duration {
		start := time.Now()
		for range n {
			if _, err := c.GetApplication(context.Background(), id); err != nil {
				t.Error(err)
			}
		}
		return time.Since(start)
	}

	pool := ias.NewPool(ias.PoolOptions{})
	fast, _ := pool.Client(tenant)
	slow, _ := pool.Client(slowTenant)
	if d := calls(slow, 3); d < 1500*time.Millisecond {
		t.Errorf("3 calls at 1 per second took %v", d)
	}
	if d := calls(fast, 30); d > time.Second {
		t.Errorf("30 calls of another ProviderConfig of the tenant took %v, want them unslowed", d)
	}

	pool = ias.NewPool(ias.PoolOptions{TenantQPS: 10, TenantBurst: 1})
	a, _ := pool.Client(tenant)
	other := tenant
	other.QPS = 999
	b, _ := pool.Client(other)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = b.GetApplication(context.Background(), id)
		_, _ = b.GetApplication(context.Background(), id)
	}()
	calls(a, 9)
	<-done
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("11 calls of two ProviderConfigs within a tenant budget of 10 a second took %v", d)
	}
}

// TestOneFailedLogonPerUser: wrong passwords for one user, from any number of
// a namespace's ProviderConfigs and however the tenant URL is written (port
// with leading zeros included), cost IAS one failed logon a backoff; the
// password IAS accepted keeps working throughout.
func TestOneFailedLogonPerUser(t *testing.T) {
	sim, err := iassim.New(iassim.Options{RateLimit: -1, Password: "right-password"}).Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	id := sim.AddApp(iassim.App{Name: "runtime-x"})
	// Long enough that a loaded machine tries every wrong password within it.
	const backoff = 2 * time.Second
	pool := ias.NewPool(ias.PoolOptions{LogonBackoff: backoff})
	platform := ias.Tenant{URL: sim.URL, Username: "admin", Password: "right-password", QPS: 100, Burst: 10}
	good, _ := pool.Client(platform)
	if _, err := good.GetApplication(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(sim.URL, "http://"), ":")
	spellings := []string{sim.URL, strings.ToUpper(sim.URL), sim.URL + "/", "http://" + host + ":00" + port, strings.Replace(sim.URL, "http://", "HTTP://", 1) + "/", sim.URL}
	var held *ias.LogonHeldError
	for i, u := range spellings {
		canonical, err := ias.ValidateURL(u, true)
		if err != nil {
			t.Fatal(err)
		}
		wrong := platform
		wrong.URL, wrong.Password, wrong.Namespace = canonical, fmt.Sprintf("wrong-password-%d", i), "team-a"
		c, _ := pool.Client(wrong)
		for range 3 {
			_, err := c.GetApplication(context.Background(), id)
			if err == nil {
				t.Fatalf("wrong password %d was accepted", i)
			}
			if i > 0 && !errors.As(err, &held) {
				t.Errorf("wrong password %d: %v, want it held back", i, err)
			}
		}
		if _, err := good.GetApplication(context.Background(), id); err != nil {
			t.Errorf("the accepted password stopped working beside wrong password %d: %v", i, err)
		}
	}
	if n := sim.Stats().Count(operation.GetApplication, http.StatusUnauthorized); n != 1 {
		t.Errorf("IAS saw %d failed logons, want 1", n)
	}
	// After the backoff one unproven password is tried again: one more.
	time.Sleep(backoff + 100*time.Millisecond)
	wrong := platform
	wrong.Password, wrong.Namespace = "wrong-password-after", "team-a"
	c, _ := pool.Client(wrong)
	_, _ = c.GetApplication(context.Background(), id)
	_, _ = c.GetApplication(context.Background(), id)
	if n := sim.Stats().Count(operation.GetApplication, http.StatusUnauthorized); n != 2 {
		t.Errorf("IAS saw %d failed logons after the backoff, want 2", n)
	}

	// The accepted password changed in IAS (after the last wrong one's
	// backoff): its successor is tried at once.
	time.Sleep(backoff + 100*time.Millisecond)
	sim.SetCredentials("admin", "rotated-password")
	if _, err := good.GetApplication(context.Background(), id); err == nil {
		t.Fatal("the old password was accepted after the change")
	}
	rotated := platform
	rotated.Password = "rotated-password"
	c, _ = pool.Client(rotated)
	if _, err := c.GetApplication(context.Background(), id); err != nil {
		t.Errorf("the new password after a change in IAS: %v, want it tried at once", err)
	}
}

// TestPlatformLogonsNeverHeldByANamespace: the platform's password is tried at
// once in a new process even when a namespace's wrong password for the same
// user was rejected first, and after a rotation whose stale password IAS
// rejected: nothing a namespace does, and no restart, holds the platform back.
func TestPlatformLogonsNeverHeldByANamespace(t *testing.T) {
	sim, err := iassim.New(iassim.Options{RateLimit: -1, Password: "right-password"}).Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	id := sim.AddApp(iassim.App{Name: "runtime-x"})
	// A new process: nothing is proven yet.
	pool := ias.NewPool(ias.PoolOptions{LogonBackoff: time.Hour})
	platform := ias.Tenant{URL: sim.URL, Username: "admin", Password: "right-password", QPS: 100, Burst: 10}

	neighbour := platform
	neighbour.Password, neighbour.Namespace = "guessed", "tenant-b"
	c, _ := pool.Client(neighbour)
	if _, err := c.GetApplication(context.Background(), id); err == nil {
		t.Fatal("the neighbour's wrong password was accepted")
	}
	good, _ := pool.Client(platform)
	if _, err := good.GetApplication(context.Background(), id); err != nil {
		t.Fatalf("the platform's password after a namespace's rejection: %v, want it tried at once", err)
	}

	// Another new process, after a rotation: the stale password of one
	// ClusterProviderConfig is rejected, the new one of another is tried at once.
	pool = ias.NewPool(ias.PoolOptions{LogonBackoff: time.Hour})
	sim.SetCredentials("admin", "rotated-password")
	if c, _ := pool.Client(platform); c != nil {
		if _, err := c.GetApplication(context.Background(), id); err == nil {
			t.Fatal("the stale password was accepted")
		}
	}
	rotated := platform
	rotated.Password = "rotated-password"
	c, _ = pool.Client(rotated)
	if _, err := c.GetApplication(context.Background(), id); err != nil {
		t.Errorf("the platform's new password after its stale one was rejected: %v, want it tried at once", err)
	}
}
