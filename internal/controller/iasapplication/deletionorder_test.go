package iasapplication

import (
	"context"
	"fmt"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// indexed is b with the RuntimeSecret controller's field indexes, which
// lookups of an app's users read.
func indexed(b *fake.ClientBuilder) *fake.ClientBuilder {
	return b.WithIndex(&runtimev1alpha1.RuntimeSecret{}, runtimev1alpha1.IndexApplication, runtimev1alpha1.ApplicationReferenced).
		WithIndex(&runtimev1alpha1.RuntimeSecret{}, runtimev1alpha1.IndexSecrets, runtimev1alpha1.SecretsRead)
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := fakes.Scheme()
	return s
}

// appNamed is IASApplication ns/name with connection Secret name-ias, being
// deleted if deleting.
func appNamed(name string, inDeletion bool, policies ...xpv2.ManagementAction) *v1alpha1.IASApplication {
	a := &v1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Finalizers: []string{"finalizer.managedresource.crossplane.io"}}}
	a.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: name + "-ias"})
	a.SetManagementPolicies(policies)
	if inDeletion {
		deleting(a, time.Now())
	}
	return a
}

// deleting marks obj as being deleted since at (the fake client wants a
// finalizer on it).
func deleting[T client.Object](obj T, at time.Time) T {
	obj.SetDeletionTimestamp(&metav1.Time{Time: at})
	obj.SetFinalizers([]string{"finalizer.managedresource.crossplane.io"})
	return obj
}

// controlledBy makes obj controlled by an EventingAuth with the given UID.
func controlledBy[T client.Object](obj T, uid types.UID) T {
	controller := true
	obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "composite.eventingauth.kyma-project.io/v1alpha1",
		Kind: "EventingAuth", Name: "xr", UID: uid, Controller: &controller}})
	return obj
}

func runtimeSecretUsing(name string, app, credentials string) *runtimev1alpha1.RuntimeSecret {
	rs := &runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if app != "" {
		rs.Spec.ForProvider.ApplicationRef = &xpv2.NamespacedReference{Name: app}
	}
	if credentials != "" {
		rs.Spec.ForProvider.CredentialsSecretRef = &xpv2.LocalSecretReference{Name: credentials}
	}
	return rs
}

func TestHoldDeletion(t *testing.T) {
	const poll = 5 * time.Minute
	cases := map[string]struct {
		reason      string
		app         *v1alpha1.IASApplication
		others      []client.Object
		wantNext    bool
		wantResult  reconcile.Result
		wantMessage string // of the Ready condition, when held
		// wantQuiet: held without a word, for at most quietHold.
		wantQuiet bool
	}{
		"NotDeleting": {
			reason:   "An app not being deleted is the managed reconciler's, users or not.",
			app:      appNamed("app", false),
			others:   []client.Object{runtimeSecretUsing("rs", "app", "")},
			wantNext: true,
		},
		"DeletingUnused": {
			reason:   "An app nobody uses is deleted at once.",
			app:      appNamed("app", true),
			others:   []client.Object{runtimeSecretUsing("rs", "other", "other-ias")},
			wantNext: true,
		},
		"DeletingUsedByReference": {
			reason:      "An app a RuntimeSecret refers to waits for it, and says so.",
			app:         appNamed("app", true),
			others:      []client.Object{runtimeSecretUsing("rs-1", "app", "app-ias")},
			wantResult:  reconcile.Result{RequeueAfter: poll, Priority: ptr.To(handler.LowPriority)},
			wantMessage: "The IAS application is deleted once no RuntimeSecret carries its credentials to a runtime; waiting for RuntimeSecret rs-1 to be deleted",
		},
		"DeletingUsedByConnectionSecret": {
			reason:      "An app whose connection Secret a RuntimeSecret copies waits too.",
			app:         appNamed("app", true),
			others:      []client.Object{runtimeSecretUsing("rs-2", "", "app-ias"), runtimeSecretUsing("rs-1", "app", "")},
			wantResult:  reconcile.Result{RequeueAfter: poll, Priority: ptr.To(handler.LowPriority)},
			wantMessage: "The IAS application is deleted once no RuntimeSecret carries its credentials to a runtime; waiting for RuntimeSecret rs-1, rs-2 to be deleted",
		},
		"DeletedTogether": {
			reason:    "An app whose users are being deleted too waits without a status write at first: they are on their way.",
			app:       appNamed("app", true),
			others:    []client.Object{deleting(runtimeSecretUsing("rs-1", "app", "app-ias"), time.Now())},
			wantQuiet: true,
		},
		"DeletedTogetherLongAgo": {
			reason:      "Once a deletion held for deleting users has waited quietHold, it says what it waits for.",
			app:         deleting(appNamed("app", false), time.Now().Add(-quietHold-time.Second)),
			others:      []client.Object{deleting(runtimeSecretUsing("rs-1", "app", "app-ias"), time.Now())},
			wantResult:  reconcile.Result{RequeueAfter: poll, Priority: ptr.To(handler.LowPriority)},
			wantMessage: "The IAS application is deleted once no RuntimeSecret carries its credentials to a runtime; waiting for RuntimeSecret rs-1 to be deleted",
		},
		"ComposedTogether": {
			reason:    "An app whose user the same EventingAuth composed waits without a status write at first, even before the garbage collector reached the user: it deletes both, in no set order.",
			app:       controlledBy(appNamed("app", true), "xr-uid"),
			others:    []client.Object{controlledBy(runtimeSecretUsing("rs-1", "app", "app-ias"), "xr-uid")},
			wantQuiet: true,
		},
		"ComposedTogetherButStays": {
			reason:      "An app deleted on its own while its owner and the RuntimeSecret it composed stay says so after siblingHold.",
			app:         controlledBy(deleting(appNamed("app", false), time.Now().Add(-siblingHold-time.Second)), "xr-uid"),
			others:      []client.Object{controlledBy(runtimeSecretUsing("rs-1", "app", "app-ias"), "xr-uid")},
			wantResult:  reconcile.Result{RequeueAfter: poll, Priority: ptr.To(handler.LowPriority)},
			wantMessage: "The IAS application is deleted once no RuntimeSecret carries its credentials to a runtime; waiting for RuntimeSecret rs-1 to be deleted",
		},
		"OwnedByAnother": {
			reason:      "An app whose user another controller owns says so at once: nothing deletes that user along with the app.",
			app:         controlledBy(appNamed("app", true), "xr-uid"),
			others:      []client.Object{controlledBy(runtimeSecretUsing("rs-1", "app", "app-ias"), "other-xr-uid")},
			wantResult:  reconcile.Result{RequeueAfter: poll, Priority: ptr.To(handler.LowPriority)},
			wantMessage: "The IAS application is deleted once no RuntimeSecret carries its credentials to a runtime; waiting for RuntimeSecret rs-1 to be deleted",
		},
		"OneUserStays": {
			reason:      "An app one of whose users is not being deleted says so at once: that may take long.",
			app:         appNamed("app", true),
			others:      []client.Object{deleting(runtimeSecretUsing("rs-1", "app", ""), time.Now()), runtimeSecretUsing("rs-2", "app", "")},
			wantResult:  reconcile.Result{RequeueAfter: poll, Priority: ptr.To(handler.LowPriority)},
			wantMessage: "The IAS application is deleted once no RuntimeSecret carries its credentials to a runtime; waiting for RuntimeSecret rs-1, rs-2 to be deleted",
		},
		"DeletingObserveOnly": {
			reason:   "An app whose policies keep it in IAS is released at once: nothing is deleted there.",
			app:      appNamed("app", true, xpv2.ManagementActionObserve),
			others:   []client.Object{runtimeSecretUsing("rs", "app", "")},
			wantNext: true,
		},
		"UserInOtherNamespace": {
			reason:   "Only RuntimeSecrets of the app's namespace can refer to it.",
			app:      appNamed("app", true),
			others:   []client.Object{&runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "rs"}, Spec: runtimeSecretUsing("rs", "app", "").Spec}},
			wantNext: true,
		},
	}
	// The RuntimeSecret controller registers the indexes the lookups read once
	// its CRD is served; until then the lookups list the namespace.
	for _, withIndexes := range []bool{true, false} {
		for name, tc := range cases {
			t.Run(fmt.Sprintf("%s/indexes=%t", name, withIndexes), func(t *testing.T) {
				b := fake.NewClientBuilder().WithScheme(testScheme(t))
				if withIndexes {
					b = indexed(b)
				}
				kube := b.WithObjects(append(tc.others, tc.app)...).
					WithStatusSubresource(&v1alpha1.IASApplication{}).Build()
				called := false
				next := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
					called = true
					return reconcile.Result{}, nil
				})
				req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "app"}}
				got, err := HoldDeletion(next, kube, poll).Reconcile(context.Background(), req)
				if err != nil {
					t.Fatalf("Reconcile: %v", err)
				}
				if called != tc.wantNext {
					t.Errorf("%s\nthe managed reconciler ran: %t, want %t", tc.reason, called, tc.wantNext)
				}
				if tc.wantQuiet {
					if got.RequeueAfter <= 0 || got.RequeueAfter > quietHold {
						t.Errorf("%s\nReconcile(...) = %+v, want a requeue within %s", tc.reason, got, quietHold)
					}
				} else if diff := cmp.Diff(tc.wantResult, got); diff != "" {
					t.Errorf("%s\nReconcile(...): -want, +got:\n%s", tc.reason, diff)
				}
				stored := &v1alpha1.IASApplication{}
				if err := kube.Get(context.Background(), req.NamespacedName, stored); err != nil {
					t.Fatal(err)
				}
				ready := stored.GetCondition(xpv2.TypeReady)
				if tc.wantMessage == "" {
					if ready.Reason == ReasonWaitingForRuntimeSecrets {
						t.Errorf("%s\nthe app says it waits: %q", tc.reason, ready.Message)
					}
					return
				}
				if ready.Status != corev1.ConditionFalse || ready.Reason != ReasonWaitingForRuntimeSecrets || ready.Message != tc.wantMessage {
					t.Errorf("%s\nReady condition %s %s %q, want False %s %q", tc.reason, ready.Status, ready.Reason, ready.Message, ReasonWaitingForRuntimeSecrets, tc.wantMessage)
				}
			})
		}
	}
}

func TestWakeOnUserDeletion(t *testing.T) {
	kube := indexed(fake.NewClientBuilder().WithScheme(testScheme(t))).WithObjects(appNamed("app", true), appNamed("other", false)).Build()
	cases := map[string]struct {
		reason  string
		deleted *runtimev1alpha1.RuntimeSecret
		want    []string
	}{
		"ByReference": {
			reason:  "an app waiting for its users to go is woken when one that refers to it goes",
			deleted: runtimeSecretUsing("rs", "app", "app-ias"), want: []string{"app"},
		},
		"ByConnectionSecret": {
			reason:  "the same for one that copies its connection Secret",
			deleted: runtimeSecretUsing("rs", "", "app-ias"), want: []string{"app"},
		},
		"OwnCredentials": {
			reason:  "one with credentials of its own wakes no app",
			deleted: runtimeSecretUsing("rs", "", "hand-made"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			WakeOnUserDeletion(kube).Delete(context.Background(), event.DeleteEvent{Object: tc.deleted}, q)
			var got []string
			for q.Len() > 0 {
				r, _ := q.Get()
				got = append(got, r.Name)
				q.Done(r)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nenqueued: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
