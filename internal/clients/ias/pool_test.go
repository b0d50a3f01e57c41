package ias_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
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
