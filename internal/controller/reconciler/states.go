package reconciler

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/kube"
)

// RecordStates records crossplane-runtime's managed resource state metrics
// (crossplane_managed_resource_exists, _ready, _synced) for the kind of list,
// as its MRStateRecorder does, every PollStateMetricInterval; nothing without
// state metrics. crossplane-runtime's recorder lists into one list it keeps:
// a deep copy of every resource of the kind, held between rounds beside the
// informer's own. This one reads the informer's objects where the cache holds
// them (kube.ReadCached) and keeps nothing.
func RecordStates(mgr manager.Manager, o Options, obj resource.Managed) error {
	if o.MetricOptions == nil || o.MetricOptions.MRStateMetrics == nil {
		return nil
	}
	gvk, err := apiutil.GVKForObject(obj, mgr.GetScheme())
	if err != nil {
		return err
	}
	return mgr.Add(&stateRecorder{
		cached: kube.ReadCached(mgr.GetCache(), obj), log: o.Logger, metrics: o.MetricOptions.MRStateMetrics,
		interval: o.MetricOptions.PollStateMetricInterval,
		labels:   prometheus.Labels{"gvk": gvk.String()},
	})
}

// stateRecorder sets the state gauges of one kind from the cache.
type stateRecorder struct {
	cached   kube.CachedObjects
	log      logging.Logger
	metrics  *statemetrics.MRStateMetrics
	interval time.Duration
	labels   prometheus.Labels
}

// NeedLeaderElection: every replica's cache holds the resources.
func (*stateRecorder) NeedLeaderElection() bool { return false }

// Start records every interval until ctx ends.
func (r *stateRecorder) Start(ctx context.Context) error {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := r.record(ctx); err != nil {
				r.log.Debug("Cannot record the managed resources' states", "error", err)
			}
		}
	}
}

// record counts the resources and those Ready and Synced. It reads the
// cache's objects: read only, and dropped at return.
func (r *stateRecorder) record(ctx context.Context) error {
	all, err := r.cached(ctx)
	if err != nil {
		return err
	}
	var exists, ready, synced float64
	for _, o := range all {
		mr, ok := o.(resource.Conditioned)
		if !ok {
			continue
		}
		exists++
		if resource.IsConditionTrue(mr.GetCondition(xpv2.TypeReady)) {
			ready++
		}
		if resource.IsConditionTrue(mr.GetCondition(xpv2.TypeSynced)) {
			synced++
		}
	}
	r.metrics.Exists.With(r.labels).Set(exists)
	r.metrics.Ready.With(r.labels).Set(ready)
	r.metrics.Synced.With(r.labels).Set(synced)
	return nil
}
