// Package runtimesecret manages RuntimeSecret resources: the Secret with an IAS
// application's credentials on a Kyma runtime.
package runtimesecret

import (
	"context"
	"time"

	xpevent "github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/kube"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
)

// Field indexes that map a Secret or IASApplication to the RuntimeSecrets using it.
const (
	indexSecrets     = v1alpha1.IndexSecrets
	indexApplication = v1alpha1.IndexApplication
	indexRuntime     = "runtimesecret.runtime"
)

// SetupGated adds the RuntimeSecret controller once its CRD and the
// IASApplication CRD, which it watches, are established.
func SetupGated(mgr ctrl.Manager, o reconciler.Options, c Config) error {
	o.Gated(mgr.GetRESTMapper(), "RuntimeSecret", func() error { return Setup(mgr, o, c) },
		v1alpha1.RuntimeSecretGroupVersionKind, iasv1alpha1.IASApplicationGroupVersionKind)
	return nil
}

// Setup adds a controller that reconciles RuntimeSecret resources.
func Setup(mgr ctrl.Manager, o reconciler.Options, c Config) error {
	name := managed.ControllerName(v1alpha1.RuntimeSecretGroupKind)
	recorder := xpevent.NewAPIRecorder(mgr.GetEventRecorderFor(name))
	r := reconciler.NewManaged(mgr, o, reconciler.Kind[*v1alpha1.RuntimeSecret]{
		GVK: v1alpha1.RuntimeSecretGroupVersionKind, Name: name, Recorder: recorder,
		Connector: &connector{
			kube:                mgr.GetClient(),
			clients:             c.Runtimes,
			recorder:            recorder,
			unreachableDeletion: c.UnreachableDeletion,
			watcher:             c.Watcher,
			deleted:             newDeletedSecrets(),
		},
		Keep: keep,
		Hold: func(r reconcile.Reconciler) reconcile.Reconciler { return WaitQuietly(r, mgr.GetClient(), time.Now) },
		Options: []managed.ReconcilerOption{
			managed.WithReferenceResolver(references{kube: mgr.GetClient(), write: managed.NewAPISimpleReferenceResolver(mgr.GetClient())}),
		},
	})

	if err := reconciler.RecordStates(mgr, o, &v1alpha1.RuntimeSecret{}); err != nil {
		return err
	}
	// A Secret's or an IASApplication's users are looked up in its
	// namespace; a runtime's, for the runtime watcher, across all.
	ctx := context.Background()
	for _, i := range []struct {
		field   string
		scope   kube.IndexScope
		extract client.IndexerFunc
	}{
		{indexSecrets, kube.InNamespace, v1alpha1.SecretsRead},
		{indexApplication, kube.InNamespace, v1alpha1.ApplicationReferenced},
		{indexRuntime, kube.AcrossNamespaces, runtimeOf},
	} {
		if err := kube.IndexField(ctx, mgr.GetCache(), &v1alpha1.RuntimeSecret{}, i.field, i.scope, i.extract); err != nil {
			return err
		}
	}
	// Changes to the kubeconfig, the credentials or the IASApplication reach the
	// runtime at once, not at the next poll: a rotated client secret is deleted
	// in IAS right after it is replaced.
	b := ctrl.NewControllerManagedBy(mgr)
	if c.Events != nil {
		// A runtime's report that its Secret changed: ahead of polls, as any
		// event.
		b = b.WatchesRawSource(c.Events)
	}
	return b.
		Named(name).
		WithOptions(reconciler.ControllerOptions(o.Options)).
		For(&v1alpha1.RuntimeSecret{}, builder.WithPredicates(reconciler.DesiredStateChanged(), predicate.Not(referenceResolved()))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(readers(mgr.GetClient()))).
		Watches(&iasv1alpha1.IASApplication{}, handler.EnqueueRequestsFromMapFunc(users(mgr.GetClient(), indexApplication)),
			builder.WithPredicates(readinessChanged())).
		Complete(r)
}

// runtimeOf names the runtime a RuntimeSecret writes to.
func runtimeOf(o client.Object) []string {
	return []string{o.(*v1alpha1.RuntimeSecret).Spec.ForProvider.RuntimeID}
}

// Targets finds the RuntimeSecrets of a runtime for the runtime-watcher
// listener, from the cache.
type Targets struct{ Reader client.Reader }

// Of returns the RuntimeSecrets of runtime id with the Secret each keeps there.
func (t Targets) Of(ctx context.Context, id string) ([]runtimewatcher.Target, error) {
	l := &v1alpha1.RuntimeSecretList{}
	if err := t.Reader.List(ctx, l, client.MatchingFields{indexRuntime: id}); err != nil {
		return nil, err
	}
	out := make([]runtimewatcher.Target, 0, len(l.Items))
	for i := range l.Items {
		ns, name := l.Items[i].TargetSecret()
		out = append(out, runtimewatcher.Target{
			RuntimeSecret: types.NamespacedName{Namespace: l.Items[i].Namespace, Name: l.Items[i].Name},
			Secret:        types.NamespacedName{Namespace: ns, Name: name}})
	}
	return out, nil
}
