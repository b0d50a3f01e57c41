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
		app  string
		edit func(*v1alpha1.RuntimeSecret)
		// quiet: the managed reconciler is not run, and rs is back at the end of QuietWait.
		quiet bool
	}{
		"its application exists without a status yet":           {app: "creating", quiet: true},
		"its application is being created":                      {app: "creating-status", quiet: true},
		"its application is not in the cache yet":               {app: "absent", quiet: true},
		"its application is Ready: the Secret is made":          {app: "ready"},
		"its application fails: rs says it waits":               {app: "failing"},
		"its application is being deleted: rs says so":          {app: "going"},
		"made longer ago than QuietWait":                        {app: "creating", edit: func(rs *v1alpha1.RuntimeSecret) { rs.CreationTimestamp = metav1.Time{Time: now.Add(-QuietWait)} }},
		"it has a status already":                               {app: "creating", edit: func(rs *v1alpha1.RuntimeSecret) { rs.SetConditions(xpv2.ReconcileSuccess()) }},
		"it has its finalizer: something may be on the runtime": {app: "creating", edit: func(rs *v1alpha1.RuntimeSecret) { meta.AddFinalizer(rs, managed.FinalizerName) }},
		"it is paused": {app: "creating", edit: func(rs *v1alpha1.RuntimeSecret) {
			rs.SetAnnotations(map[string]string{meta.AnnotationKeyReconciliationPaused: "true"})
		}},
		"it names its credentials directly":                         {edit: func(rs *v1alpha1.RuntimeSecret) { rs.Spec.ForProvider.ApplicationRef = nil }},
		"its application is in another namespace: an error to tell": {app: "creating", edit: func(rs *v1alpha1.RuntimeSecret) { rs.Spec.ForProvider.ApplicationRef.Namespace = "other" }},
		"it is being deleted": {app: "creating", edit: func(rs *v1alpha1.RuntimeSecret) {
			rs.Finalizers = []string{"x"}
			rs.DeletionTimestamp = &metav1.Time{Time: now}
		}},
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
				t.Fatal(err)
			}
			if ran == tc.quiet {
				t.Errorf("managed reconciler ran: %v, want %v", ran, !tc.quiet)
			}
			if want := made.Add(QuietWait).Sub(now); tc.quiet && got.RequeueAfter != want {
				t.Errorf("RequeueAfter = %v, want %v: back when QuietWait ends", got.RequeueAfter, want)
			}
			if tc.quiet && (got.Priority == nil || *got.Priority != handler.LowPriority) {
				t.Errorf("Priority = %v, want low: saying Waiting is not urgent", got.Priority)
			}
		})
	}
}
