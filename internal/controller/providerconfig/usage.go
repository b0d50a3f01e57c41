package providerconfig

// The usage-counting controllers: the users of ProviderConfigs and
// ClusterProviderConfigs are counted, so that one in use cannot be deleted.

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpproviderconfig "github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
)

// SetupGated adds the usage-counting controllers once the config and usage CRDs
// are established.
func SetupGated(mgr ctrl.Manager, o reconciler.Options) error {
	o.Gated(mgr.GetRESTMapper(), "ProviderConfig", func() error { return Setup(mgr, o) },
		v1alpha1.ProviderConfigGroupVersionKind, v1alpha1.ProviderConfigUsageGroupVersionKind,
		v1alpha1.ClusterProviderConfigGroupVersionKind, v1alpha1.ClusterProviderConfigUsageGroupVersionKind)
	return nil
}

// Setup adds the usage-counting controllers of both config kinds. Namespaced
// managed resources record their usage as a ProviderConfigUsage in their own
// namespace whichever kind they reference, so both count ProviderConfigUsages.
// They keep crossplane-runtime's global reconcile limiter: counting is not urgent.
func Setup(mgr ctrl.Manager, o reconciler.Options) error {
	for _, k := range []struct {
		config resource.ProviderConfigKinds
		obj    resource.Object
	}{
		{resource.ProviderConfigKinds{Config: v1alpha1.ProviderConfigGroupVersionKind, Usage: v1alpha1.ProviderConfigUsageGroupVersionKind, UsageList: v1alpha1.ProviderConfigUsageListGroupVersionKind}, &v1alpha1.ProviderConfig{}},
		{resource.ProviderConfigKinds{Config: v1alpha1.ClusterProviderConfigGroupVersionKind, Usage: v1alpha1.ProviderConfigUsageGroupVersionKind, UsageList: v1alpha1.ProviderConfigUsageListGroupVersionKind}, &v1alpha1.ClusterProviderConfig{}},
	} {
		name := xpproviderconfig.ControllerName(k.config.Config.GroupKind().String())
		r := xpproviderconfig.NewReconciler(mgr, k.config,
			xpproviderconfig.WithLogger(o.Logger.WithValues("controller", name)),
			xpproviderconfig.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))))
		if err := ctrl.NewControllerManagedBy(mgr).
			Named(name).
			WithOptions(o.ForControllerRuntime()).
			For(k.obj).
			Watches(&v1alpha1.ProviderConfigUsage{}, &resource.EnqueueRequestForProviderConfig{}).
			Complete(ratelimiter.NewReconciler(name, r, o.GlobalRateLimiter)); err != nil {
			return err
		}
	}
	return nil
}
