// Package controller is the registry of all of the provider's controllers.
package controller

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/kymabridge"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/providerconfig"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/runtimesecret"
)

// Configs are the settings of each controller beyond what all share,
// built once by package provider from the settings.
type Configs struct {
	IASApplication iasapplication.Config
	RuntimeSecret  runtimesecret.Config
	KymaBridge     kymabridge.Config
}

// SetupGated adds every controller of the provider. Each starts once the CRDs
// of the kinds it reads are established (safe-start): a managed resource
// definition that is not active, or a cluster without the Kyma CRD, starts
// nothing and breaks nothing.
func SetupGated(mgr ctrl.Manager, o reconciler.Options, c Configs) error {
	o.Gate = new(gate.Gate[schema.GroupVersionKind])
	for _, setup := range []func() error{
		func() error { return providerconfig.SetupGated(mgr, o) },
		func() error { return iasapplication.SetupGated(mgr, o, c.IASApplication) },
		func() error { return runtimesecret.SetupGated(mgr, o, c.RuntimeSecret) },
		func() error { return kymabridge.SetupGated(mgr, o, c.KymaBridge) },
	} {
		if err := setup(); err != nil {
			return err
		}
	}
	return customresourcesgate.Setup(mgr, o.Options)
}
