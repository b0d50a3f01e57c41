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
		reason     string
		rs         *v1alpha1.RuntimeSecret
		objects    []runtime.Object
		wantWrites int
		// wantRef is the credentials Secret the resource names afterwards.
		wantRef string
	}{
		"ResolvedBefore": {
			reason: "a reference resolved before needs nothing written",
			rs:     rs("app-ias"), objects: []runtime.Object{app}, wantRef: "app-ias",
		},
		"NotResolvedYet": {
			reason: "a reference not resolved yet is resolved and written",
			rs:     rs(""), objects: []runtime.Object{app}, wantWrites: 1,
		},
		"FirstReconcile": {
			reason: "on the first reconcile crossplane-runtime's finalizer write, later in the reconcile, writes the resolution",
			rs:     first(rs("")), objects: []runtime.Object{app}, wantRef: "app-ias",
		},
		"ApplicationNamesAnotherSecret": {
			reason: "a reference is resolved once, as crossplane-runtime resolves, unless the policy says always",
			rs:     rs("old-ias"), objects: []runtime.Object{app}, wantRef: "old-ias",
		},
		"ResolvedAlways": {
			reason: "with the policy always, an application that names another Secret now is followed",
			rs:     always(rs("old-ias")), objects: []runtime.Object{app}, wantWrites: 1,
		},
		"ApplicationMissing": {
			reason: "a missing application is handed on, so that crossplane-runtime words the error",
			rs:     rs(""), wantWrites: 1,
		},
		"ApplicationMissingOnFirstReconcile": {
			reason: "the same on the first reconcile",
			rs:     first(rs("")), wantWrites: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &countingResolver{}
			r := references{kube: crfake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(tc.objects...).Build(), write: w}
			if err := r.ResolveReferences(context.Background(), tc.rs); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if w.calls != tc.wantWrites {
				t.Errorf("%s\nresolutions handed on to be written: %d, want %d", tc.reason, w.calls, tc.wantWrites)
			}
			if got := tc.rs.Spec.ForProvider.CredentialsSecretRef; tc.wantWrites == 0 && (got == nil || got.Name != tc.wantRef) {
				t.Errorf("%s\ncredentialsSecretRef %v, want %q", tc.reason, got, tc.wantRef)
			}
		})
	}
}
