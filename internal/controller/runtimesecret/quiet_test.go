package runtimesecret

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestWaitQuietly: a RuntimeSecret made with its IASApplication is left alone
// while that application is being created, for at most QuietWait after its
// creation; in any other case the managed reconciler runs and says what it
// waits for.
func TestWaitQuietly(t *testing.T) {
	scheme := fakes.Scheme()
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	made := now.Add(-10 * time.Second)
	app := func(name string, edit func(*iasv1alpha1.IASApplication)) *iasv1alpha1.IASApplication {
		a := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kcp"}}
		if edit != nil {
			edit(a)
		}
		return a
	}
	apps := []runtime.Object{
		app("creating", nil),
		app("creating-status", func(a *iasv1alpha1.IASApplication) { a.SetConditions(xpv2.Creating(), xpv2.ReconcileSuccess()) }),
		app("ready", func(a *iasv1alpha1.IASApplication) { a.SetConditions(xpv2.Available(), xpv2.ReconcileSuccess()) }),
		app("failing", func(a *iasv1alpha1.IASApplication) { a.SetConditions(xpv2.ReconcileError(errors.New("boom"))) }),
		app("going", func(a *iasv1alpha1.IASApplication) {
			a.Finalizers = []string{"x"}
			a.DeletionTimestamp = &metav1.Time{Time: made}
		}),
	}
	cases := map[string]struct {
		reason string
		app    string
		edit   func(*v1alpha1.RuntimeSecret)
		// quiet: the managed reconciler is not run, and rs is back at the end of QuietWait.
		quiet bool
	}{
		"ApplicationWithoutStatus": {
			reason: "its application exists without a status yet: it will be Ready soon, and saying Waiting now would be one write more",
			app:    "creating", quiet: true,
		},
		"ApplicationCreating": {
			reason: "its application is being created: the same",
			app:    "creating-status", quiet: true,
		},
		"ApplicationNotCached": {
			reason: "its application is not in the cache yet: it was made with rs, a moment ago",
			app:    "absent", quiet: true,
		},
		"ApplicationReady": {
			reason: "its application is Ready: the Secret is made now",
			app:    "ready",
		},
		"ApplicationFailing": {
			reason: "its application fails: rs says it waits, and for what",
			app:    "failing",
		},
		"ApplicationGoing": {
			reason: "its application is being deleted: rs says so",
			app:    "going",
		},
		"OlderThanQuietWait": {
			reason: "rs made longer ago than QuietWait has waited long enough to say so",
			app:    "creating", edit: func(rs *v1alpha1.RuntimeSecret) { rs.CreationTimestamp = metav1.Time{Time: now.Add(-QuietWait)} },
		},
		"HasStatus": {
			reason: "rs with a status already is past its first moments",
			app:    "creating", edit: func(rs *v1alpha1.RuntimeSecret) { rs.SetConditions(xpv2.ReconcileSuccess()) },
		},
		"HasFinalizer": {
			reason: "rs with its finalizer may have put something on the runtime: it is reconciled",
			app:    "creating", edit: func(rs *v1alpha1.RuntimeSecret) { meta.AddFinalizer(rs, managed.FinalizerName) },
		},
		"Paused": {
			reason: "a paused rs is left to the managed reconciler, which says it is paused",
			app:    "creating", edit: func(rs *v1alpha1.RuntimeSecret) {
				rs.SetAnnotations(map[string]string{meta.AnnotationKeyReconciliationPaused: "true"})
			},
		},
		"CredentialsNamedDirectly": {
			reason: "rs that names its credentials directly has no application to wait for",
			edit:   func(rs *v1alpha1.RuntimeSecret) { rs.Spec.ForProvider.ApplicationRef = nil },
		},
		"ApplicationInAnotherNamespace": {
			reason: "an application in another namespace is an error to tell at once",
			app:    "creating", edit: func(rs *v1alpha1.RuntimeSecret) { rs.Spec.ForProvider.ApplicationRef.Namespace = "other" },
		},
		"BeingDeleted": {
			reason: "a deletion is never held back",
			app:    "creating", edit: func(rs *v1alpha1.RuntimeSecret) {
				rs.Finalizers = []string{"x"}
				rs.DeletionTimestamp = &metav1.Time{Time: now}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rs := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rt-1", Namespace: "kcp", CreationTimestamp: metav1.Time{Time: made}}}
			rs.Spec.ForProvider = v1alpha1.RuntimeSecretParameters{RuntimeID: "rt-1", ApplicationRef: &xpv2.NamespacedReference{Name: tc.app}}
			if tc.edit != nil {
				tc.edit(rs)
			}
			kube := crfake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(append(apps, rs)...).Build()
			ran := false
			inner := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				ran = true
				return reconcile.Result{}, nil
			})
			got, err := WaitQuietly(inner, kube, func() time.Time { return now }).
				Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp", Name: "rt-1"}})
			if err != nil {
				t.Fatalf("%s\nReconcile(): %v", tc.reason, err)
			}
			if ran == tc.quiet {
				t.Errorf("%s\nmanaged reconciler ran: %v, want %v", tc.reason, ran, !tc.quiet)
			}
			if want := made.Add(QuietWait).Sub(now); tc.quiet && got.RequeueAfter != want {
				t.Errorf("%s\nRequeueAfter = %v, want %v: back when QuietWait ends", tc.reason, got.RequeueAfter, want)
			}
			if tc.quiet && (got.Priority == nil || *got.Priority != handler.LowPriority) {
				t.Errorf("%s\nPriority = %v, want low: saying Waiting is not urgent", tc.reason, got.Priority)
			}
		})
	}
}
