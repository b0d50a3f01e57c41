package kymabridge

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestReconcileMissingDefinition: while the API server does not serve
// EventingAuths, a Kyma CR says why and waits for the CRD's watch; once the
// CRD is established, it tries again shortly instead, without a warning, for
// the API server's discovery to catch up.
func TestReconcileMissingDefinition(t *testing.T) {
	const resync = time.Minute
	crd := func(established apiextensionsv1.ConditionStatus) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: eventingAuthCRD},
			Status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
				{Type: apiextensionsv1.Established, Status: established},
			}},
		}
	}
	cases := map[string]struct {
		reason     string
		crd        *apiextensionsv1.CustomResourceDefinition
		want       ctrl.Result
		wantEvents int
	}{
		"NoDefinition": {
			reason: "without the Kyma CRD there is nothing to bridge yet: an event says so, and the bridge looks again",
			want:   ctrl.Result{RequeueAfter: resync}, wantEvents: 1,
		},
		"DefinitionNotYetServed": {
			reason: "the same while the CRD is not established",
			crd:    crd(apiextensionsv1.ConditionFalse), want: ctrl.Result{RequeueAfter: resync}, wantEvents: 1,
		},
		"DefinitionEstablished": {
			reason: "once established the bridge waits only for the API server to serve it",
			crd:    crd(apiextensionsv1.ConditionTrue), want: ctrl.Result{RequeueAfter: reconciler.MappingPoll},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := fakes.Scheme(apiextensionsv1.AddToScheme)
			b := fake.NewClientBuilder().WithScheme(scheme)
			if tc.crd != nil {
				b = b.WithObjects(tc.crd)
			}
			kube := b.WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if p, ok := obj.(*metav1.PartialObjectMetadata); ok {
						switch p.GroupVersionKind() {
						case eventingauth.KymaKind:
							p.SetNamespace(key.Namespace)
							p.SetName(key.Name)
							p.SetUID("kyma-uid")
							return nil
						case eventingauth.Kind:
							return &meta.NoKindMatchError{GroupKind: eventingauth.Kind.GroupKind()}
						}
					}
					return c.Get(ctx, key, obj, opts...)
				},
				Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
					return &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: eventingauth.Kind.Group, Kind: eventingauth.Kind.Kind}}
				},
			}).Build()
			rec := &fakes.Events{}
			r := &bridge{kube: kube, recorder: rec, log: logging.NewNopLogger(), c: Config{Resync: resync}}
			got, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "rt-1"}})
			if err != nil {
				t.Fatalf("%s\nReconcile: %v", tc.reason, err)
			}
			if got != tc.want {
				t.Errorf("%s\nresult %+v, want %+v", tc.reason, got, tc.want)
			}
			if len(rec.Reasons()) != tc.wantEvents {
				t.Errorf("%s\nevents %v, want %d", tc.reason, rec.Reasons(), tc.wantEvents)
			}
		})
	}
}

// TestNoEventingAuthWhileItsDefinitionGoes: while the EventingAuth CRD is
// being deleted (its Configuration removed), the bridge makes no EventingAuth,
// which would hold the definition's deletion, and says so on the Kyma CR; the
// watch on the CRD wakes it when the definition is back.
func TestNoEventingAuthWhileItsDefinitionGoes(t *testing.T) {
	now := metav1.Now()
	cases := map[string]struct {
		reason      string
		deleting    bool
		xrdDeleting bool
		wantApply   bool
		wantEvents  []string
	}{
		"DefinitionBeingDeleted": {reason: "no EventingAuth is made while its definition goes", deleting: true,
			wantEvents: []string{string(eventDefinitionDeleted)}},
		"XRDBeingDeleted": {reason: "nor while its XRD goes, which Crossplane deletes before the CRD: one made then would hold it", xrdDeleting: true,
			wantEvents: []string{string(eventDefinitionDeleted)}},
		"DefinitionInstalled": {reason: "an installed definition gets its EventingAuth", wantApply: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: eventingAuthCRD}}
			if tc.deleting {
				crd.SetDeletionTimestamp(&now)
				crd.SetFinalizers([]string{"customresourcecleanup.apiextensions.k8s.io"})
			}
			applied := false
			kube := fake.NewClientBuilder().WithScheme(fakes.Scheme(apiextensionsv1.AddToScheme)).WithObjects(crd).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if p, ok := obj.(*metav1.PartialObjectMetadata); ok {
						switch p.GroupVersionKind() {
						case eventingauth.KymaKind:
							p.SetNamespace(key.Namespace)
							p.SetName(key.Name)
							p.SetUID("kyma-uid")
							return nil
						case compositeDefinitionKind:
							if tc.xrdDeleting {
								p.SetName(key.Name)
								p.SetDeletionTimestamp(&now)
								return nil
							}
						}
						return kerrors.NewNotFound(schema.GroupResource{Resource: "eventingauths"}, key.Name)
					}
					return c.Get(ctx, key, obj, opts...)
				},
				Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
					applied = true
					return nil
				},
			}).Build()
			rec := &fakes.Events{}
			r := &bridge{kube: kube, recorder: rec, log: logging.NewNopLogger(), c: Config{Resync: time.Minute}}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "rt-1"}}); err != nil {
				t.Fatalf("%s\nReconcile: %v", tc.reason, err)
			}
			if applied != tc.wantApply {
				t.Errorf("%s\nEventingAuth applied: %t, want %t", tc.reason, applied, tc.wantApply)
			}
			if diff := cmp.Diff(tc.wantEvents, rec.Reasons(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nevents (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
