// Package reconciler holds what the managed-resource controllers of this
// provider configure alike.
package reconciler

import (
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	"k8s.io/client-go/util/workqueue"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/runtime"
	"github.com/kyma-project/provider-eventing-auth/internal/secretmetrics"
)

// Options are what every controller of the provider is set up with, declared
// once for all of them.
type Options struct {
	controller.Options
	// IAS shares tenant state (rate limits, endpoints) across IASApplications.
	IAS *ias.Pool
	// Runtimes caches runtime clients for RuntimeSecrets.
	Runtimes *runtime.Clients
	// PollJitter spreads polls of many resources; default 10% of the poll interval.
	PollJitter time.Duration
	// Polls bounds the routine polls per second of all managed resources; nil: unbounded.
	Polls *PollBudget
	// ManagementPolicies turns on spec.managementPolicies.
	ManagementPolicies bool
	// IASListSettle is how long IAS's lists may lag behind a create.
	IASListSettle time.Duration
	// IASSecretCheck is how often each app's api secrets are listed at the least.
	IASSecretCheck time.Duration
	// IASInventoryAge is how old the listing of a tenant's apps that polls read
	// may be; never more than the poll interval.
	IASInventoryAge time.Duration
	// SecretMetrics exports the published client secrets' state; nil: none.
	SecretMetrics *secretmetrics.Metrics
	// RuntimeUnreachableDeletion is how long deleting a RuntimeSecret waits for
	// a runtime that does not answer before it completes without it.
	RuntimeUnreachableDeletion time.Duration
	// KymaBridge turns on the controller that keeps an EventingAuth per Kyma CR.
	KymaBridge bool
	// SetupFailed is told when a controller that waited for its CRDs cannot be
	// set up; default panic.
	SetupFailed func(error)
}

// CommonOptions are the managed reconciler options every kind uses: logging,
// events, the poll with jitter (default 10% of the poll), management policies and
// metrics.
func CommonOptions(o Options, name string, recorder event.Recorder) []managed.ReconcilerOption {
	jitter := o.PollJitter
	if jitter == 0 {
		jitter = o.PollInterval / 10
	}
	opts := []managed.ReconcilerOption{
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithRecorder(recorder),
		managed.WithPollInterval(o.PollInterval),
		managed.WithPollJitterHook(jitter),
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

// RecordStates adds crossplane-runtime's recorder of the managed resource
// state metrics (crossplane_managed_resource_exists, _ready, _synced) for one
// kind, as provider-template does; nothing without state metrics.
func RecordStates(mgr manager.Manager, o Options, list resource.ManagedList) error {
	if o.MetricOptions == nil || o.MetricOptions.MRStateMetrics == nil {
		return nil
	}
	return mgr.Add(statemetrics.NewMRStateRecorder(mgr.GetClient(), o.Logger, o.MetricOptions.MRStateMetrics, list, o.MetricOptions.PollStateMetricInterval))
}
