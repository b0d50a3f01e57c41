package reconciler

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestKeepStatus: the writes of the finalizer and of the creation annotations
// persist what they should and leave the status the reconcile set in memory,
// which the API server's answer would otherwise replace.
func TestKeepStatus(t *testing.T) {
	finalizer := func(c client.Client) resource.Finalizer {
		return KeepStatusFinalizer(c, managed.FinalizerName)
	}
	cases := map[string]struct {
		reason    string
		finalized bool // the stored resource has the finalizer
		write     func(ctx context.Context, c client.Client, rs *v1alpha1.RuntimeSecret) error
		persisted func(rs *v1alpha1.RuntimeSecret) bool
	}{
		"AddFinalizer": {
			reason: "adding the finalizer persists it and keeps the status set in memory",
			write: func(ctx context.Context, c client.Client, rs *v1alpha1.RuntimeSecret) error {
				return finalizer(c).AddFinalizer(ctx, rs)
			},
			persisted: func(rs *v1alpha1.RuntimeSecret) bool { return meta.FinalizerExists(rs, managed.FinalizerName) },
		},
		"RemoveFinalizer": {
			reason:    "the same for its removal",
			finalized: true,
			write: func(ctx context.Context, c client.Client, rs *v1alpha1.RuntimeSecret) error {
				return finalizer(c).RemoveFinalizer(ctx, rs)
			},
			persisted: func(rs *v1alpha1.RuntimeSecret) bool { return !meta.FinalizerExists(rs, managed.FinalizerName) },
		},
		"UpdateCriticalAnnotations": {
			reason: "the same for the external name and the creation annotations",
			write: func(ctx context.Context, c client.Client, rs *v1alpha1.RuntimeSecret) error {
				meta.SetExternalName(rs, "uuid")
				return KeepStatusAnnotations(managed.NewRetryingCriticalAnnotationUpdater(c)).UpdateCriticalAnnotations(ctx, rs)
			},
			persisted: func(rs *v1alpha1.RuntimeSecret) bool { return meta.GetExternalName(rs) == "uuid" },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := fakes.Scheme()
			stored := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp"}}
			if tc.finalized {
				meta.AddFinalizer(stored, managed.FinalizerName)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).
				WithStatusSubresource(&v1alpha1.RuntimeSecret{}).Build()
			ctx := context.Background()
			rs := &v1alpha1.RuntimeSecret{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), rs); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			// What this reconcile's Observe found, not written yet.
			rs.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: "Waiting", Message: "Waiting for the IASApplication app"})
			rs.Status.AtProvider.ClusterID = "rt-1"

			if err := tc.write(ctx, c, rs); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if got := rs.GetCondition(xpv2.TypeReady); got.Reason != "Waiting" || rs.Status.AtProvider.ClusterID != "rt-1" {
				t.Errorf("%s\nstatus after the write: Ready %q, clusterID %q; want the one set before it", tc.reason, got.Reason, rs.Status.AtProvider.ClusterID)
			}
			written := &v1alpha1.RuntimeSecret{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), written); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if !tc.persisted(written) {
				t.Errorf("%s\nthe write did not persist its change: %+v", tc.reason, written.ObjectMeta)
			}
		})
	}
}

// TestRemoveFinalizerFromAStaleRead: the finalizer is removed even when the
// resource changed since it was read (a status write the cache had not seen),
// and only it: another finalizer stays.
func TestRemoveFinalizerFromAStaleRead(t *testing.T) {
	cases := map[string]struct {
		reason     string
		finalizers []string
		// moved changes the stored finalizers after the read.
		moved []string
		want  []string
	}{
		"OursAlone": {
			reason:     "the provider's finalizer alone is removed",
			finalizers: []string{managed.FinalizerName},
		},
		"OursAfterAnother": {
			reason:     "another controller's finalizer stays",
			finalizers: []string{"other", managed.FinalizerName}, want: []string{"other"},
		},
		"MovedSinceItWasRead": {
			reason:     "a removal by position from a stale read would take another's finalizer: it is removed by name",
			finalizers: []string{managed.FinalizerName, "other"}, moved: []string{"other", managed.FinalizerName}, want: []string{"other"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := fakes.Scheme()
			stored := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp", Finalizers: tc.finalizers}}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).WithStatusSubresource(&v1alpha1.RuntimeSecret{}).Build()
			ctx := context.Background()
			read := &v1alpha1.RuntimeSecret{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), read); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			// Written after the read: the read is stale.
			now := &v1alpha1.RuntimeSecret{}
			_ = c.Get(ctx, client.ObjectKeyFromObject(stored), now)
			now.SetConditions(xpv2.Deleting())
			if err := c.Status().Update(ctx, now); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if tc.moved != nil {
				now.SetFinalizers(tc.moved)
				if err := c.Update(ctx, now); err != nil {
					t.Fatalf("%s\n%v", tc.reason, err)
				}
			}
			err := KeepStatusFinalizer(c, managed.FinalizerName).RemoveFinalizer(ctx, read)
			if tc.moved != nil {
				// The stale read's index no longer holds ours: crossplane-runtime's
				// Update, which conflicts, and the next reconcile reads again.
				if err == nil {
					t.Fatal("RemoveFinalizer() from a read whose finalizers moved succeeded, want a conflict")
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nRemoveFinalizer(): %v", tc.reason, err)
			}
			got := &v1alpha1.RuntimeSecret{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), got); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got.GetFinalizers(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nfinalizers: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
