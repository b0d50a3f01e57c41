package kube

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestNameClaims(t *testing.T) {
	const key = "https://t1.accounts.ondemand.com\n\nruntime-1"
	cases := map[string]struct {
		reason  string
		held    string // the claimant before, "" for none
		holds   bool   // whether that claimant still names the app
		want    string // the other claimant returned
		wantNow string // the claimant afterwards
	}{
		"free":        {reason: "a name nobody claims is claimed", wantNow: "ns/a"},
		"own":         {reason: "a claim of the same resource (a retry, a new process) holds", held: "ns/a", wantNow: "ns/a"},
		"held":        {reason: "a claimant that still names the app keeps it", held: "ns/b", holds: true, want: "ns/b", wantNow: "ns/b"},
		"left behind": {reason: "a claimant gone, or naming another app now, is taken over", held: "ns/b", wantNow: "ns/a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			_ = coordinationv1.AddToScheme(s)
			b := fake.NewClientBuilder().WithScheme(s)
			if tc.held != "" {
				b = b.WithObjects(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: leaseName(key), Namespace: "crossplane-system"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(tc.held)}})
			}
			c := b.Build()
			claims := NameClaims{Writer: c, Reader: c, Namespace: "crossplane-system"}
			got, err := claims.Claim(context.Background(), key, "runtime-1", "ns/a", func(context.Context, string) (bool, error) { return tc.holds, nil })
			if err != nil {
				t.Fatalf("%s\nClaim: %v", tc.reason, err)
			}
			if got != tc.want {
				t.Errorf("%s\nClaim returned claimant %q, want %q", tc.reason, got, tc.want)
			}
			l := &coordinationv1.Lease{}
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: "crossplane-system", Name: leaseName(key)}, l); err != nil {
				t.Fatal(err)
			}
			if now := ptr.Deref(l.Spec.HolderIdentity, ""); now != tc.wantNow {
				t.Errorf("%s\nclaimant afterwards %q, want %q", tc.reason, now, tc.wantNow)
			}
			// Only the claimant releases its claim.
			if err := claims.Release(context.Background(), key, "ns/other"); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: "crossplane-system", Name: leaseName(key)}, l); err != nil {
				t.Errorf("%s\na release by another resource removed the claim: %v", tc.reason, err)
			}
			if err := claims.Release(context.Background(), key, tc.wantNow); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: "crossplane-system", Name: leaseName(key)}, l); err == nil {
				t.Errorf("%s\nthe claimant's release left the claim", tc.reason)
			}
		})
	}
}
