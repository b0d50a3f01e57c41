// Package reconciler holds what the managed-resource controllers of this
// provider configure alike.
package reconciler

import (
	"time"

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
