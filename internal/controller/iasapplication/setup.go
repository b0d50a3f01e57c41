// Package iasapplication manages IASApplication resources: an OIDC application in
// IAS and its client secret, published as a connection Secret.
package iasapplication

import (
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	apisv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/kube"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
)

// DefaultListSettle bounds how long IAS's filtered lists lag behind a create.
// IAS lists a new app only after some seconds; a create whose answer was lost is
// repeated only once the list has had this long to show the app.
const DefaultListSettle = time.Minute

// DefaultSecretCheck is how often an app's api secrets are listed at the least:
// a secret deleted in IAS behind the provider's back is replaced within it.
const DefaultSecretCheck = time.Hour

// DefaultInventoryAge is how old the listing of all the tenant's apps that polls
// read may be. An app deleted or changed in IAS is found within the poll
// interval plus this; each listing costs a request per hundred apps.
const DefaultInventoryAge = 30 * time.Second

// SetupGated adds the IASApplication controller once its CRD, the
// ProviderConfigUsage CRD and the RuntimeSecret CRD, which it watches, are
// established.
func SetupGated(mgr ctrl.Manager, o reconciler.Options, c Config) error {
	o.Gated(mgr.GetRESTMapper(), "IASApplication", func() error { return Setup(mgr, o, c) },
		v1alpha1.IASApplicationGroupVersionKind, apisv1alpha1.ProviderConfigUsageGroupVersionKind,
		runtimev1alpha1.RuntimeSecretGroupVersionKind)
	return nil
}

// Setup adds a controller that reconciles IASApplication resources.
func Setup(mgr ctrl.Manager, o reconciler.Options, c Config) error {
	name := managed.ControllerName(v1alpha1.IASApplicationGroupKind)
	recorder := event.NewAPIRecorder(mgr.GetEventRecorderFor(name))
	r := reconciler.NewManaged(mgr, o, reconciler.Kind[*v1alpha1.IASApplication]{
		GVK: v1alpha1.IASApplicationGroupVersionKind, Name: name, Recorder: recorder,
		Connector: &connector{
			shared: shared{
				kube:       mgr.GetClient(),
				reader:     mgr.GetAPIReader(),
				recorder:   recorder,
				publisher:  managed.NewAPILocalSecretPublisher(mgr.GetClient(), mgr.GetScheme()),
				users:      runtimeSecretUsers{kube: mgr.GetClient()},
				created:    newCreated(),
				deleted:    newDeleted(),
				checks:     newSecretChecks(c.SecretCheck),
				listSettle: c.ListSettle,
				// One listing of the tenant serves every resource's poll.
				inventoryAge:  c.InventoryAge,
				secretCheck:   c.SecretCheck,
				secretMetrics: c.SecretMetrics,
				names:         c.NameClaims,
			},
			usage:           resource.NewProviderConfigUsageTracker(mgr.GetClient(), &apisv1alpha1.ProviderConfigUsage{}),
			tenantClients:   c.TenantClients,
			logons:          c.Logons,
			providerConfigs: c.ProviderConfigs,
			told:            newToldOnce(clock.RealClock{}),
		},
		Keep: keep(mgr.GetClient()),
		Hold: func(r reconcile.Reconciler) reconcile.Reconciler {
			return HoldDeletion(r, mgr.GetClient(), o.PollInterval)
		},
	})

	if err := mgr.Add(tenantLister{reader: mgr.GetClient(), direct: mgr.GetAPIReader(), providerConfigs: c.ProviderConfigs, listings: c.TenantClients, log: o.Logger}); err != nil {
		return err
	}
	if err := reconciler.RecordStates(mgr, o, &v1alpha1.IASApplication{}); err != nil {
		return err
	}
	if c.SecretMetrics != nil {
		c.SecretMetrics.ReadFrom(published(kube.ReadCached(mgr.GetCache(), &v1alpha1.IASApplication{}), time.Now))
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(reconciler.ControllerOptions(o.Options)).
		WithEventFilter(reconciler.DesiredStateChanged()).
		Watches(&v1alpha1.IASApplication{}, &enqueueWhenListed{listings: c.TenantClients}).
		Watches(&runtimev1alpha1.RuntimeSecret{}, WakeOnUserDeletion(mgr.GetClient())).
		Complete(r)
}
