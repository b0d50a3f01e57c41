package reconciler

import (
	"context"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// RecordStates records crossplane-runtime's managed resource state metrics
// (crossplane_managed_resource_exists, _ready, _synced) for the kind of list,
// as its MRStateRecorder does, every PollStateMetricInterval; nothing without
// state metrics. crossplane-runtime's recorder lists into one list it keeps:
// a deep copy of every resource of the kind, held between rounds beside the
// informer's own. This one reads the informer's objects without copying them
// and keeps nothing.
func RecordStates(mgr manager.Manager, o Options, list resource.ManagedList) error {
	if o.MetricOptions == nil || o.MetricOptions.MRStateMetrics == nil {
		return nil
	}
	gvk, err := apiutil.GVKForObject(list, mgr.GetScheme())
	if err != nil {
		return err
	}
	return mgr.Add(&stateRecorder{
		reader: mgr.GetClient(), log: o.Logger, metrics: o.MetricOptions.MRStateMetrics,
		interval: o.MetricOptions.PollStateMetricInterval,
		newList:  func() resource.ManagedList { return list.DeepCopyObject().(resource.ManagedList) }, //nolint:forcetypeassert // A copy of a ManagedList.
		labels:   prometheus.Labels{"gvk": strings.TrimSuffix(gvk.String(), "List")},
	})
}

// stateRecorder sets the state gauges of one kind from the cache.
type stateRecorder struct {
	reader   client.Reader
	log      logging.Logger
	metrics  *statemetrics.MRStateMetrics
	interval time.Duration
	newList  func() resource.ManagedList
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

// record counts the resources and those Ready and Synced. The list holds the
// cache's objects (UnsafeDisableDeepCopy): read only, and dropped at return.
func (r *stateRecorder) record(ctx context.Context) error {
	l := r.newList()
	if err := r.reader.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	var ready, synced float64
	items := l.GetItems()
	for _, o := range items {
		if resource.IsConditionTrue(o.GetCondition(xpv2.TypeReady)) {
			ready++
		}
		if resource.IsConditionTrue(o.GetCondition(xpv2.TypeSynced)) {
			synced++
		}
	}
	r.metrics.Exists.With(r.labels).Set(float64(len(items)))
	r.metrics.Ready.With(r.labels).Set(ready)
	r.metrics.Synced.With(r.labels).Set(synced)
	return nil
}
