// Package reconciler holds what the managed-resource controllers of this
// provider configure alike.
package reconciler

import (
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"k8s.io/client-go/util/workqueue"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Options are what every controller of the provider is set up with, declared
// once for all of them.
type Options struct {
	controller.Options
	// PollJitter spreads polls of many resources (package provider: a tenth
	// of the poll interval unless set).
	PollJitter time.Duration
	// Polls bounds the routine polls per second of all managed resources; nil: unbounded.
	Polls *PollBudget
	// ManagementPolicies turns on spec.managementPolicies.
	ManagementPolicies bool
	// SetupFailed is told when a controller that waited for its CRDs cannot be
	// set up; default panic.
	SetupFailed func(error)
}

// CommonOptions are the managed reconciler options every kind uses: logging,
// events (WithoutDeletedEvents), the poll with its jitter, management policies and metrics.
func CommonOptions(o Options, name string, recorder event.Recorder) []managed.ReconcilerOption {
	opts := []managed.ReconcilerOption{
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithRecorder(WithoutDeletedEvents(recorder)),
		managed.WithPollInterval(o.PollInterval),
		managed.WithPollJitterHook(o.PollJitter),
	}
	if o.ManagementPolicies {
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
