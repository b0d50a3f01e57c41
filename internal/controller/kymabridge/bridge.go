// Package kymabridge keeps one EventingAuth composite resource per Kyma CR: same
// name and namespace, controlled by the Kyma CR (so garbage collection deletes it
// with the Kyma), globalAccount from the Kyma's label.
package kymabridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
)

const fieldOwner = "provider-eventing-auth/kyma-bridge"

// eventingAuthCRD is the name of the CRD Crossplane makes of the EventingAuth
// XRD, and of the XRD.
var eventingAuthCRD = "eventingauths." + eventingauth.Kind.Group

// compositeDefinitionKind is Crossplane's XRD, read by metadata only.
var compositeDefinitionKind = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "CompositeResourceDefinition"}

// everyKyma maps the EventingAuth CRD to every Kyma CR: once it exists, each
// can have its EventingAuth.
func (r *bridge) everyKyma(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(eventingauth.KymaKind.GroupVersion().WithKind(eventingauth.KymaKind.Kind + "List"))
	if err := r.kube.List(ctx, l); err != nil {
		r.log.Debug("Cannot list Kyma CRs to create their EventingAuths", "error", err)
		return nil
	}
	out := make([]reconcile.Request, 0, len(l.Items))
	for _, k := range l.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: k.Namespace, Name: k.Name}})
	}
	return out
}

// SetupGated adds the bridge, when turned on, once the Kyma CRD exists.
func SetupGated(mgr ctrl.Manager, o reconciler.Options, c Config) error {
	if !c.Enabled {
		return nil
	}
	o.Gated(mgr.GetRESTMapper(), "kyma bridge", func() error { return Setup(mgr, o, c) }, eventingauth.KymaKind)
	return nil
}

// Setup adds the bridge controller. Kyma CRs are watched by metadata only. It
// re-applies each EventingAuth every c.Resync. While the EventingAuth
// definition is missing, the watch on its CRD wakes every Kyma CR once it is
// established, instead of each looking again and again.
func Setup(mgr ctrl.Manager, o reconciler.Options, c Config) error {
	kyma := &metav1.PartialObjectMetadata{}
	kyma.SetGroupVersionKind(eventingauth.KymaKind)
	r := &bridge{kube: mgr.GetClient(), recorder: event.NewAPIRecorder(mgr.GetEventRecorderFor("kyma-bridge")), log: o.Logger, c: c}
	// The resyncs go last: a new Kyma CR never waits behind the re-applies of
	// all the others, which fall due together after a bulk creation.
	return ctrl.NewControllerManagedBy(mgr).
		Named("kyma-bridge").
		WithOptions(controller.Options{MaxConcurrentReconciles: c.Workers}).
		For(kyma).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(r.everyKyma),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == eventingAuthCRD }))).
		Complete(reconciler.PollsLast(r, o.Polls))
}

type bridge struct {
	kube     client.Client
	recorder event.Recorder
	log      logging.Logger
	c        Config
}

func (r *bridge) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	kyma := &metav1.PartialObjectMetadata{}
	kyma.SetGroupVersionKind(eventingauth.KymaKind)
	if err := r.kube.Get(ctx, req.NamespacedName, kyma); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if kyma.GetDeletionTimestamp() != nil {
		// Garbage collection deletes the EventingAuth it controls.
		return ctrl.Result{}, nil
	}
	if r.definitionDeleted(ctx) {
		// The Configuration is being removed: Crossplane deletes the
		// definition once no EventingAuth is left, and one made now would
		// hold it. The watch on the CRD wakes every Kyma CR when it is back.
		r.recorder.Event(kyma, event.Normal(eventDefinitionDeleted, fmt.Sprintf(
			"The kind %s is being deleted (its Configuration is being removed): EventingAuth %s/%s is not made again until it is installed again; the runtime's credentials stay as they are",
			eventingauth.Kind.GroupKind(), kyma.GetNamespace(), kyma.GetName())))
		return ctrl.Result{}, nil
	}
	want := eventingauth.Desired(kyma, r.c.CompositePoll)
	if r.applied(ctx, want) {
		return ctrl.Result{RequeueAfter: r.c.Resync}, nil
	}
	err := r.kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(want), client.FieldOwner(fieldOwner), client.ForceOwnership)
	switch {
	case meta.IsNoMatchError(err) || kerrors.IsNotFound(err) && isMissingKind(err):
		if r.definitionEstablished(ctx) {
			// The watch on the CRD woke this reconcile, but the API server's
			// discovery, or the client's mapping of it, has not caught up with
			// the established definition yet (as reconciler.Gated waits for);
			// no event wakes it again when it has.
			return ctrl.Result{RequeueAfter: reconciler.MappingPoll}, nil
		}
		r.recorder.Event(kyma, event.Warning(eventDefinitionMissing,
			fmt.Errorf("Cannot create EventingAuth %s/%s: the kind %s is not installed; install the configuration-eventing-auth package (its XRD). It is created as soon as the kind is.",
				kyma.GetNamespace(), kyma.GetName(), eventingauth.Kind.GroupKind())))
		return ctrl.Result{RequeueAfter: r.c.Resync}, nil
	case err != nil:
		r.recorder.Event(kyma, event.Warning(eventCannotApply, fmt.Errorf("Cannot create or update EventingAuth %s/%s: %w", kyma.GetNamespace(), kyma.GetName(), err)))
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.c.Resync}, nil
}

// applied tells whether the EventingAuth already holds what the bridge would
// apply, by its digest annotation, read from a cache of EventingAuths'
// metadata: an unchanged runtime costs no write, and no EventingAuth is kept
// whole in memory. An EventingAuth deleted by hand, or one whose Kyma CR changed,
// is applied again; a hand edit of its spec stays until the Kyma CR changes.
func (r *bridge) applied(ctx context.Context, want client.Object) bool {
	xr := &metav1.PartialObjectMetadata{}
	xr.SetGroupVersionKind(eventingauth.Kind)
	if err := r.kube.Get(ctx, client.ObjectKeyFromObject(want), xr); err != nil {
		return false
	}
	return xr.GetDeletionTimestamp() == nil && xr.GetAnnotations()[apis.AnnotationBridgeApplied] == want.GetAnnotations()[apis.AnnotationBridgeApplied]
}

// definitionEstablished tells whether the EventingAuth CRD is in the cache
// and established.
func (r *bridge) definitionEstablished(ctx context.Context) bool {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	return r.kube.Get(ctx, types.NamespacedName{Name: eventingAuthCRD}, crd) == nil &&
		apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
}

// definitionDeleted tells whether the EventingAuth XRD or its CRD is being
// deleted. Crossplane deletes the CRD only once no EventingAuth is left: until
// then only the XRD shows its deletion. No XRD kind (no Crossplane) is none
// being deleted.
func (r *bridge) definitionDeleted(ctx context.Context) bool {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if r.kube.Get(ctx, types.NamespacedName{Name: eventingAuthCRD}, crd) == nil && crd.GetDeletionTimestamp() != nil {
		return true
	}
	xrd := &metav1.PartialObjectMetadata{}
	xrd.SetGroupVersionKind(compositeDefinitionKind)
	return r.kube.Get(ctx, types.NamespacedName{Name: eventingAuthCRD}, xrd) == nil && xrd.GetDeletionTimestamp() != nil
}

// isMissingKind tells a 404 for the whole resource type (the API server does not
// serve it yet) from a 404 for an object.
func isMissingKind(err error) bool {
	var s kerrors.APIStatus
	if !errors.As(err, &s) {
		return false
	}
	d := s.Status().Details
	return d == nil || d.Name == ""
}
