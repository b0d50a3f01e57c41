// Package controller wires the provider's controllers into a manager.
package controller

import (
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/runtime"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/config"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/runtimesecret"
)

// Options of the provider's controllers.
type Options struct {
	controller.Options
	// IAS shares tenant state (rate limits, endpoints) across IASApplications.
	IAS *ias.Pool
	// Runtimes caches runtime clients for RuntimeSecrets.
	Runtimes *runtime.Clients
	// PollJitter spreads polls of many resources; default 10% of the poll interval.
	PollJitter time.Duration
	// ManagementPolicies turns on spec.managementPolicies.
	ManagementPolicies bool
}

// Setup adds every controller of the provider.
func Setup(mgr ctrl.Manager, o Options) error {
	if err := config.Setup(mgr, o.Options); err != nil {
		return err
	}
	if err := iasapplication.Setup(mgr, iasapplication.Options{
		Options: o.Options, Pool: o.IAS, PollJitter: o.PollJitter, ManagementPolicies: o.ManagementPolicies,
	}); err != nil {
		return err
	}
	return runtimesecret.Setup(mgr, runtimesecret.Options{
		Options: o.Options, Clients: o.Runtimes, PollJitter: o.PollJitter, ManagementPolicies: o.ManagementPolicies,
	})
}
