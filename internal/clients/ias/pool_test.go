package ias_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/test/support/testnet"
)

// TestNamespacesShareABoundedPool: the credentials and users the pool keeps
// for namespaced ProviderConfigs are bounded; over the bound a new one is
// refused with ErrNamespacedFull, while the platform's are always taken and
// a namespace's are taken again once unused ones were dropped.
func TestNamespacesShareABoundedPool(t *testing.T) {
	const idle = 200 * time.Millisecond
	pool := ias.NewPool(ias.PoolOptions{MaxNamespaced: 2, IdleAfter: idle})
	tenant := func(ns, password string) ias.Tenant {
		return ias.Tenant{URL: "https://t.accounts.ondemand.com", Username: "user-" + ns, Password: password, QPS: 10, Burst: 1, Namespace: ns}
	}
	cases := []struct {
		reason  string
		tenant  ias.Tenant
		wait    time.Duration
		wantErr error
	}{
		{reason: "a namespace's first credentials are kept", tenant: tenant("tenant-b", "p1")},
		{reason: "its second ones too, up to the bound", tenant: tenant("tenant-b", "p2")},
		{reason: "the same credentials again add nothing", tenant: tenant("tenant-b", "p1")},
		{reason: "another namespace's beyond the bound are refused", tenant: tenant("tenant-c", "p1"), wantErr: ias.ErrNamespacedFull},
		{reason: "a namespace's third ones beyond the bound are refused", tenant: tenant("tenant-b", "p3"), wantErr: ias.ErrNamespacedFull},
		{reason: "the platform's are taken however full the namespaces' are", tenant: tenant("", "platform")},
		{reason: "once unused ones are dropped, a namespace's new ones are taken", tenant: tenant("tenant-c", "p1"), wait: 2 * idle},
	}
	for i, tc := range cases {
		time.Sleep(tc.wait)
		_, err := pool.Client(tc.tenant)
		if !errors.Is(err, tc.wantErr) {
			t.Fatalf("%d: %s\nClient(%s): %v, want %v", i, tc.reason, tc.tenant.Namespace, err, tc.wantErr)
		}
	}
	// Many namespaces one after another never hold more than the bound.
	refused := 0
	for i := range 50 {
		if _, err := pool.Client(tenant(fmt.Sprintf("ns-%d", i), "p")); errors.Is(err, ias.ErrNamespacedFull) {
			refused++
		}
	}
	if refused < 48 {
		t.Errorf("%d of 50 new namespaces refused, want at least 48 with a bound of 2", refused)
	}
}

// TestTenantCallsCloseWhatTimedOut: a tenant that accepts connections and
// never answers keeps no connection open once the calls timed out.
func TestTenantCallsCloseWhatTimedOut(t *testing.T) {
	hanging := testnet.Hang(t)
	pool := ias.NewPool(ias.PoolOptions{Timeout: 300 * time.Millisecond, Attempts: 1})
	for i := range 3 {
		// Each its own credentials: its own circuit and connections.
		c, err := pool.Client(ias.Tenant{URL: "https://" + hanging.Addr, Username: "u", Password: fmt.Sprint("p", i), QPS: 10, Burst: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetApplication(context.Background(), "8f0c1f3e-2b1d-4c5e-9a7b-1c2d3e4f5a6b"); err == nil {
			t.Fatal("a tenant that never answers answered")
		}
	}
	if n := hanging.Accepted(); n < 3 {
		t.Fatalf("the hanging tenant accepted %d connections, want 3", n)
	}
	deadline := time.Now().Add(2 * time.Second)
	for hanging.Open() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := hanging.Open(); n != 0 {
		t.Errorf("%d connections to the hanging tenant still open after their calls timed out", n)
	}
}
