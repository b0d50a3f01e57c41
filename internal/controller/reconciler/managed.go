package reconciler

import (
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A Kind is what NewManaged needs of one managed kind.
type Kind[T resource.Managed] struct {
	GVK schema.GroupVersionKind
	// Name of the kind's controller, and Recorder of its events.
	Name     string
	Recorder event.Recorder
	// Connector is the kind's own; Keep says how a resource of the kind is
	// kept while its runtime lives (RetainWhileRuntimeLives).
	Connector managed.TypedExternalConnector[T]
	Keep      Keep[T]
	// Hold, if set, may keep a resource waiting before the managed
	// reconciler runs (IASApplication: HoldDeletion; RuntimeSecret:
	// WaitQuietly).
	Hold func(reconcile.Reconciler) reconcile.Reconciler
	// Options are the kind's own managed reconciler options.
	Options []managed.ReconcilerOption
}

// NewManaged returns crossplane-runtime's managed reconciler for the kind with
// every departure this provider makes from it, composed in one order for
// every kind: the kind's Hold, then PollsLast, then the managed reconciler
// with the options below. docs/architecture.md lists each departure, why it is
// made, and the test that pins it.
func NewManaged[T resource.Managed](mgr manager.Manager, o Options, k Kind[T]) reconcile.Reconciler {
	retention := Retention{Cached: mgr.GetClient(), Live: mgr.GetAPIReader(), Recorder: k.Recorder, Deleting: NewDeletions()}
	opts := append(CommonOptions(o, k.Name, k.Recorder),
		// Only a deleted Kyma CR deletes what a resource made: a resource
		// deleted while its runtime lives (a package removed) lets go of it.
		managed.WithTypedExternalConnector(RetainWhileRuntimeLives(k.Connector, retention, k.Keep)),
		// No external name is set from metadata.name: an IASApplication's is
		// the IAS UUID that Create learns, a RuntimeSecret has none.
		managed.WithInitializers(),
		// Creating is safe to retry: Observe finds by name what a create whose
		// answer was lost made.
		managed.WithDeterministicExternalName(true),
		// Observe itself waits out a lagging read after a create, so the 30s
		// grace would only hold back a resource deleted right after creation.
		managed.WithCreationGracePeriod(time.Nanosecond),
	)
	opts = append(opts, KeepStatus(mgr.GetClient())...)
	opts = append(opts, k.Options...)
	var r reconcile.Reconciler = PollsLast(managed.NewReconciler(mgr, resource.ManagedKind(k.GVK), opts...), o.Polls)
	if k.Hold != nil {
		r = k.Hold(r)
	}
	return r
}
