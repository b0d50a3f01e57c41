package reconciler

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// TestKeepStatus: the writes of the finalizer and of the creation annotations
// persist what they should and leave the status the reconcile set in memory,
// which the API server's answer would otherwise replace.
func TestKeepStatus(t *testing.T) {
	finalizer := func(c client.Client) resource.Finalizer {
		return KeepStatusFinalizer(resource.NewAPIFinalizer(c, managed.FinalizerName), managed.FinalizerName)
	}
	cases := map[string]struct {
		finalized bool // the stored resource has the finalizer
		write     func(ctx context.Context, c client.Client, rs *v1alpha1.RuntimeSecret) error
		persisted func(rs *v1alpha1.RuntimeSecret) bool
	}{
		"AddFinalizer": {
			write: func(ctx context.Context, c client.Client, rs *v1alpha1.RuntimeSecret) error {
				return finalizer(c).AddFinalizer(ctx, rs)
			},
			persisted: func(rs *v1alpha1.RuntimeSecret) bool { return meta.FinalizerExists(rs, managed.FinalizerName) },
		},
		"RemoveFinalizer": {
			finalized: true,
			write: func(ctx context.Context, c client.Client, rs *v1alpha1.RuntimeSecret) error {
				return finalizer(c).RemoveFinalizer(ctx, rs)
			},
			persisted: func(rs *v1alpha1.RuntimeSecret) bool { return !meta.FinalizerExists(rs, managed.FinalizerName) },
		},
		"UpdateCriticalAnnotations": {
			write: func(ctx context.Context, c client.Client, rs *v1alpha1.RuntimeSecret) error {
				meta.SetExternalName(rs, "uuid")
				return KeepStatusAnnotations(managed.NewRetryingCriticalAnnotationUpdater(c)).UpdateCriticalAnnotations(ctx, rs)
			},
			persisted: func(rs *v1alpha1.RuntimeSecret) bool { return meta.GetExternalName(rs) == "uuid" },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = apis.AddToScheme(scheme)
			stored := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp"}}
			if tc.finalized {
				meta.AddFinalizer(stored, managed.FinalizerName)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).
				WithStatusSubresource(&v1alpha1.RuntimeSecret{}).Build()
			ctx := context.Background()
			rs := &v1alpha1.RuntimeSecret{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), rs); err != nil {
				t.Fatal(err)
			}
			// What this reconcile's Observe found, not written yet.
			rs.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: "Waiting", Message: "Waiting for the IASApplication app"})
			rs.Status.AtProvider.ClusterID = "rt-1"

			if err := tc.write(ctx, c, rs); err != nil {
				t.Fatal(err)
			}
			if got := rs.GetCondition(xpv2.TypeReady); got.Reason != "Waiting" || rs.Status.AtProvider.ClusterID != "rt-1" {
				t.Errorf("status after the write: Ready %q, clusterID %q; want the one set before it", got.Reason, rs.Status.AtProvider.ClusterID)
			}
			written := &v1alpha1.RuntimeSecret{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), written); err != nil {
				t.Fatal(err)
			}
			if !tc.persisted(written) {
				t.Errorf("the write did not persist its change: %+v", written.ObjectMeta)
			}
		})
	}
}
