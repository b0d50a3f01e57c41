package runtimesecret

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// countingResolver counts the resolutions handed to crossplane-runtime's
// resolver, which writes.
type countingResolver struct{ calls int }

func (c *countingResolver) ResolveReferences(context.Context, resource.Managed) error {
	c.calls++
	return nil
}

func TestReferencesWriteOnlyWhatChanged(t *testing.T) {
	scheme := fakes.Scheme()
	app := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}}
	app.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "app-ias"})
	rs := func(credentials string) *v1alpha1.RuntimeSecret {
		r := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns", Finalizers: []string{managed.FinalizerName}}}
		r.Spec.ForProvider.ApplicationRef = &xpv2.NamespacedReference{Name: "app"}
		if credentials != "" {
			r.Spec.ForProvider.CredentialsSecretRef = &xpv2.LocalSecretReference{Name: credentials}
		}
		return r
	}
	always := func(r *v1alpha1.RuntimeSecret) *v1alpha1.RuntimeSecret {
		r.Spec.ForProvider.ApplicationRef.Policy = &xpv2.Policy{Resolve: ptr.To(xpv2.ResolvePolicyAlways)}
		return r
	}
	first := func(r *v1alpha1.RuntimeSecret) *v1alpha1.RuntimeSecret {
		r.Finalizers = nil
		return r
	}
	cases := map[string]struct {
		rs         *v1alpha1.RuntimeSecret
		objects    []runtime.Object
		wantWrites int
		// wantRef is the credentials Secret the resource names afterwards.
		wantRef string
	}{
		"resolved before: nothing to write":      {rs: rs("app-ias"), objects: []runtime.Object{app}, wantRef: "app-ias"},
		"not resolved yet: resolved and written": {rs: rs(""), objects: []runtime.Object{app}, wantWrites: 1},
		// crossplane-runtime's finalizer write, later in the reconcile, writes it.
		"first reconcile: resolved, left for the finalizer's write": {rs: first(rs("")), objects: []runtime.Object{app}, wantRef: "app-ias"},
		// Resolved once, as crossplane-runtime resolves, unless the policy says always.
		"the application names another Secret now":                       {rs: rs("old-ias"), objects: []runtime.Object{app}, wantRef: "old-ias"},
		"resolved always, the application names another Secret now":      {rs: always(rs("old-ias")), objects: []runtime.Object{app}, wantWrites: 1},
		"the application is missing: crossplane-runtime words the error": {rs: rs(""), wantWrites: 1},
		"the application is missing on the first reconcile":              {rs: first(rs("")), wantWrites: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &countingResolver{}
			r := references{kube: crfake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(tc.objects...).Build(), write: w}
			if err := r.ResolveReferences(context.Background(), tc.rs); err != nil {
				t.Fatal(err)
			}
			if w.calls != tc.wantWrites {
				t.Errorf("resolutions handed on to be written: %d, want %d", w.calls, tc.wantWrites)
			}
			if got := tc.rs.Spec.ForProvider.CredentialsSecretRef; tc.wantWrites == 0 && (got == nil || got.Name != tc.wantRef) {
				t.Errorf("credentialsSecretRef %v, want %q", got, tc.wantRef)
			}
		})
	}
}
