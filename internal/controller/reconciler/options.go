// Package reconciler holds what the managed-resource controllers of this
// provider configure alike.
package reconciler

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
)

// CommonOptions are the managed reconciler options every kind uses: logging,
// events, the poll with jitter (default 10% of the poll), management policies and
// metrics.
func CommonOptions(o controller.Options, name string, recorder event.Recorder, jitter time.Duration, managementPolicies bool) []managed.ReconcilerOption {
	if jitter == 0 {
		jitter = o.PollInterval / 10
	}
	opts := []managed.ReconcilerOption{
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithRecorder(recorder),
		managed.WithPollInterval(o.PollInterval),
		managed.WithPollJitterHook(jitter),
	}
	if managementPolicies {
		opts = append(opts, managed.WithManagementPolicies())
	}
	if o.MetricOptions != nil {
		opts = append(opts, managed.WithMetricRecorder(o.MetricOptions.MRMetrics))
	}
	return opts
}

// ControllerOptions are the controller-runtime options every managed-resource
// controller uses. Failed and explicitly requeued reconciles back off from
// 50ms rather than crossplane-runtime's 1s: the Observe that follows every
// Create is such a requeue, and a new runtime should not wait a second for it.
func ControllerOptions(o controller.Options) crcontroller.Options {
	c := o.ForControllerRuntime()
	c.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](50*time.Millisecond, time.Minute)
	return c
}
