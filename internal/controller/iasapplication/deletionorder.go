package iasapplication

import (
	"context"
	"slices"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// quietHold is how long a deletion held only for RuntimeSecrets that are
// themselves being deleted waits before its condition says so.
const quietHold = 30 * time.Second

// siblingHold is how long a deletion held for RuntimeSecrets not yet being
// deleted, but composed with the app by the same owner, waits before its
// condition says so: the garbage collector deletes an EventingAuth's parts
// in no set order, moments apart. An app deleted on its own, its owner
// staying, says so after this.
const siblingHold = 5 * time.Second

// HoldDeletion keeps the order of deletion: an IAS app is deleted only once no
// RuntimeSecret uses it, so that no runtime is left holding credentials IAS no
// longer accepts. While one does, the IASApplication's deletion waits, says so
// in its Ready condition (after quietHold if every such RuntimeSecret is being
// deleted too, after siblingHold if the same owner composed them), and costs
// nothing more: the deletion of the last
// RuntimeSecret wakes it (WakeOnUserDeletion), and its poll is the safety net.
//
// This replaces a Usage (protection.crossplane.io) in the Composition. Core's
// Usage webhook refuses the app's deletion while it is used, so the garbage
// collector retries it with backoff, spending its request budget on refusals
// and recording each attempt on the app; core re-checks a used resource only
// every 30 s; and at rest core's Usage controller rewrites every used app at
// each of its polls. Waiting here is driven by a watch
// and writes one condition.
func HoldDeletion(r reconcile.Reconciler, kube client.Client, poll time.Duration) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		cr := &v1alpha1.IASApplication{}
		if err := kube.Get(ctx, req.NamespacedName, cr); err != nil || !meta.WasDeleted(cr) || !deletesApp(cr) {
			return r.Reconcile(ctx, req)
		}
		users, hold, err := usersOf(ctx, kube, cr)
		if err != nil || len(users) == 0 {
			// An error is the managed reconciler's to report; it reads the
			// same cache.
			return r.Reconcile(ctx, req)
		}
		if quiet := cr.GetDeletionTimestamp().Add(hold); time.Now().Before(quiet) {
			// Deleted together, as the garbage collector deletes a runtime's
			// resources: the RuntimeSecrets are on their way and their
			// deletion wakes this one. Saying so would cost a mass deletion
			// a status write per runtime.
			return reconcile.Result{RequeueAfter: min(poll, time.Until(quiet)), Priority: ptr.To(handler.LowPriority)}, nil
		}
		waiting := xpv2.Deleting().WithMessage(waitingForUsers(users))
		waiting.Reason = ReasonWaitingForRuntimeSecrets
		cr.SetConditions(waiting)
		if err := kube.Status().Update(ctx, cr); err != nil && !kerrors.IsNotFound(err) && !kerrors.IsConflict(err) {
			return reconcile.Result{}, err
		}
		// The deletion of the last user wakes it; this is the safety net,
		// behind other work as any poll.
		return reconcile.Result{RequeueAfter: poll, Priority: ptr.To(handler.LowPriority)}, nil
	})
}

// deletesApp tells whether deleting the IASApplication deletes its IAS app:
// not when its management policies leave the app alone.
func deletesApp(cr *v1alpha1.IASApplication) bool {
	p := cr.GetManagementPolicies()
	return managed.NewManagementPoliciesResolver(len(p) > 0, p).ShouldDelete()
}

// usersOf names the RuntimeSecrets that use the app, deleting or not: one
// being deleted still has the credentials on its runtime until it is gone.
// hold is how long the app's deletion may wait for them before saying so:
// the shortest quietFor of them.
func usersOf(ctx context.Context, kube client.Reader, cr *v1alpha1.IASApplication) (names []string, hold time.Duration, err error) {
	using, err := usingRuntimeSecrets(ctx, kube, cr)
	if err != nil {
		return nil, 0, err
	}
	names, hold = make([]string, 0, len(using)), quietHold
	for _, rs := range using {
		names = append(names, rs.GetName())
		hold = min(hold, quietFor(rs, cr))
	}
	slices.Sort(names)
	return names, hold, nil
}

// quietFor is how long the deletion of app may wait for its user rs without
// a word: quietHold if rs is being deleted, siblingHold if the controller that
// owns app owns rs too (an EventingAuth composed both), else nothing.
func quietFor(rs metav1.Object, app *v1alpha1.IASApplication) time.Duration {
	if meta.WasDeleted(rs) {
		return quietHold
	}
	if a, r := metav1.GetControllerOf(app), metav1.GetControllerOf(rs); a != nil && r != nil && a.UID == r.UID {
		return siblingHold
	}
	return 0
}

// waitingForUsers says what a held deletion waits for.
func waitingForUsers(users []string) string {
	return "The IAS application is deleted once no RuntimeSecret carries its credentials to a runtime; waiting for RuntimeSecret " + fewNames(users) + " to be deleted"
}

// WakeOnUserDeletion enqueues the IASApplications a deleted RuntimeSecret used:
// a deletion held for it goes on at once.
func WakeOnUserDeletion(kube client.Reader) handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.Funcs{DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		rs, ok := e.Object.(*runtimev1alpha1.RuntimeSecret)
		if !ok {
			return
		}
		p := rs.Spec.ForProvider
		if p.ApplicationRef != nil {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: rs.GetNamespace(), Name: p.ApplicationRef.Name}})
			return
		}
		if p.CredentialsSecretRef == nil {
			return
		}
		l := &v1alpha1.IASApplicationList{}
		if err := kube.List(ctx, l, client.InNamespace(rs.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
			return
		}
		for i := range l.Items {
			if uses(rs, &l.Items[i]) {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: rs.GetNamespace(), Name: l.Items[i].GetName()}})
			}
		}
	}}
}
