// Package controller is the registry of all of the provider's controllers.
package controller

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kyma-project/provider-eventing-auth/internal/controller/config"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/kymabridge"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/runtimesecret"
)

// SetupGated adds every controller of the provider. Each starts once the CRDs
// of the kinds it reads are established (safe-start): a managed resource
// definition that is not active, or a cluster without the Kyma CRD, starts
// nothing and breaks nothing.
func SetupGated(mgr ctrl.Manager, o reconciler.Options) error {
	o.Gate = new(gate.Gate[schema.GroupVersionKind])
	for _, setup := range []func(ctrl.Manager, reconciler.Options) error{
		config.SetupGated,
		iasapplication.SetupGated,
		runtimesecret.SetupGated,
		kymabridge.SetupGated,
	} {
		if err := setup(mgr, o); err != nil {
			return err
		}
	}
	return customresourcesgate.Setup(mgr, o.Options)
}
