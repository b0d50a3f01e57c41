package runtimesecret

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// QuietWait is how long a new RuntimeSecret waits for its IASApplication
// without a word: as long as crossplane-runtime's own grace for a resource
// just created (its default creation grace period).
const QuietWait = 30 * time.Second

// WaitQuietly wraps the RuntimeSecret reconciler so that a RuntimeSecret made
// together with its IASApplication, as a Kyma runtime's are, writes nothing
// while that application is being created: not its finalizer (nothing is on
// the runtime yet) and not a Waiting status that the Ready status replaces a
// moment later. The application's readiness wakes it (readinessChanged), and
// one reconcile then writes the finalizer, the resolved reference and the
// outcome. A Waiting status costs a write and a watch event for every reader
// of the kind, per runtime at bring-up.
//
// It keeps quiet only within QuietWait of the RuntimeSecret's creation, while
// it has no status and no finalizer, and while the application is missing or
// being created without an error. Otherwise the managed reconciler runs and
// says what it waits for; at the end of that time it does so behind other work
// (low priority).
func WaitQuietly(r reconcile.Reconciler, kube client.Reader, now func() time.Time) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		rs := &v1alpha1.RuntimeSecret{}
		if err := kube.Get(ctx, req.NamespacedName, rs); err != nil {
			return r.Reconcile(ctx, req)
		}
		if left := quietLeft(ctx, kube, rs, now()); left > 0 {
			// Saying Waiting at the end is not urgent: behind changes, so
			// that a thousand RuntimeSecrets made at once, all saying it
			// together, do not hold back those whose application became
			// Ready meanwhile.
			return reconcile.Result{RequeueAfter: left, Priority: ptr.To(handler.LowPriority)}, nil
		}
		return r.Reconcile(ctx, req)
	})
}

// quietLeft is how much longer rs may wait for its IASApplication without a
// word; 0: not at all.
func quietLeft(ctx context.Context, kube client.Reader, rs *v1alpha1.RuntimeSecret, now time.Time) time.Duration {
	left := rs.GetCreationTimestamp().Add(QuietWait).Sub(now)
	ref := rs.Spec.ForProvider.ApplicationRef
	switch {
	case left <= 0, meta.WasDeleted(rs), meta.IsPaused(rs),
		len(rs.Status.Conditions) > 0, meta.FinalizerExists(rs, managed.FinalizerName),
		ref == nil, ref.Namespace != "" && ref.Namespace != rs.GetNamespace():
		return 0
	}
	app := &iasv1alpha1.IASApplication{}
	switch err := kube.Get(ctx, types.NamespacedName{Namespace: rs.GetNamespace(), Name: ref.Name}, app); {
	case resource.IgnoreNotFound(err) != nil:
		return 0
	case err != nil:
		return left // not in the cache yet: its creation wakes rs
	}
	if resource.IsConditionTrue(app.GetCondition(xpv2.TypeReady)) ||
		app.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionFalse || meta.WasDeleted(app) {
		// Ready: go on. Failing or going: say what rs waits for.
		return 0
	}
	return left
}
