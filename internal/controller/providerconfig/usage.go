// Package providerconfig counts the users of ProviderConfigs and
// ClusterProviderConfigs, so that one in use cannot be deleted; package
// clients/ias/tenantconfig resolves them.
package providerconfig

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpproviderconfig "github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
)

// SetupGated adds the usage-counting controllers once the config and usage CRDs
// are established.
func SetupGated(mgr ctrl.Manager, o reconciler.Options) error {
	o.Gated(mgr.GetRESTMapper(), "ProviderConfig", func() error { return Setup(mgr, o) },
		v1alpha1.ProviderConfigGroupVersionKind, v1alpha1.ProviderConfigUsageGroupVersionKind,
		v1alpha1.ClusterProviderConfigGroupVersionKind, v1alpha1.ClusterProviderConfigUsageGroupVersionKind)
	return nil
}

// UsageSettle is how long a change of usages waits before the config's users
// are counted again. Each count lists every usage of the config, and every
// new runtime adds one: counted per usage, 1,000 runtimes made at once cost
// 1,000 listings of up to 1,000 usages and two writes of the config each. A
// settle counts a burst once. Deleting a config in use is still refused at
// once: its finalizer is there from its first count, and its deletion is
// counted without delay.
const UsageSettle = 5 * time.Second

// Setup adds the usage-counting controllers of both config kinds. Namespaced
// managed resources record their usage as a ProviderConfigUsage in their own
// namespace whichever kind they reference, so both count ProviderConfigUsages;
// each counts only the usages of its own kind.
// They keep crossplane-runtime's global reconcile limiter: counting is not urgent.
// A resync of the cache wakes neither: crossplane-runtime's count writes the
// config and its status each time, changed or not, and nothing can have
// changed that no event told of.
func Setup(mgr ctrl.Manager, o reconciler.Options) error {
	changed := builder.WithPredicates(predicate.ResourceVersionChangedPredicate{})
	for _, k := range []struct {
		config resource.ProviderConfigKinds
		obj    resource.Object
	}{
		{resource.ProviderConfigKinds{Config: v1alpha1.ProviderConfigGroupVersionKind, Usage: v1alpha1.ProviderConfigUsageGroupVersionKind, UsageList: v1alpha1.ProviderConfigUsageListGroupVersionKind}, &v1alpha1.ProviderConfig{}},
		{resource.ProviderConfigKinds{Config: v1alpha1.ClusterProviderConfigGroupVersionKind, Usage: v1alpha1.ProviderConfigUsageGroupVersionKind, UsageList: v1alpha1.ProviderConfigUsageListGroupVersionKind}, &v1alpha1.ClusterProviderConfig{}},
	} {
		usages := settled(&resource.EnqueueRequestForProviderConfig{Kind: k.config.Config.Kind}, UsageSettle)
		name := xpproviderconfig.ControllerName(k.config.Config.GroupKind().String())
		r := xpproviderconfig.NewReconciler(mgr, k.config,
			xpproviderconfig.WithLogger(o.Logger.WithValues("controller", name)),
			xpproviderconfig.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))))
		if err := ctrl.NewControllerManagedBy(mgr).
			Named(name).
			WithOptions(o.ForControllerRuntime()).
			For(k.obj, changed).
			Watches(&v1alpha1.ProviderConfigUsage{}, usages, changed).
			Complete(ratelimiter.NewReconciler(name, r, o.GlobalRateLimiter)); err != nil {
			return err
		}
	}
	return nil
}

// settled passes what h enqueues after a delay, so that a burst of events is
// one reconcile: the workqueue keeps the earliest time of an item queued for
// later.
func settled(h handler.EventHandler, delay time.Duration) handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e ctrlevent.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, e, delayed{q, delay})
		},
		UpdateFunc: func(ctx context.Context, e ctrlevent.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, e, delayed{q, delay})
		},
		DeleteFunc: func(ctx context.Context, e ctrlevent.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Delete(ctx, e, delayed{q, delay})
		},
		GenericFunc: func(ctx context.Context, e ctrlevent.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Generic(ctx, e, delayed{q, delay})
		},
	}
}

// delayed is a workqueue whose Add waits.
type delayed struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	delay time.Duration
}

func (d delayed) Add(r reconcile.Request) { d.AddAfter(r, d.delay) }
