// Package controller wires the provider's controllers into a manager.
package controller

import (
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/runtime"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/config"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/kymabridge"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
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
	// Polls bounds the routine polls per second of all managed resources; nil: unbounded.
	Polls *reconciler.PollBudget
	// IASListSettle is how long IAS's lists may lag behind a create; default
	// iasapplication.DefaultListSettle.
	IASListSettle time.Duration
	// ManagementPolicies turns on spec.managementPolicies.
	ManagementPolicies bool
	// KymaBridge turns on the controller that keeps an EventingAuth per Kyma CR.
	KymaBridge bool
	// SetupFailed is told when a controller that waited for its CRDs cannot be
	// set up; default panic.
	SetupFailed func(error)
}

// Setup adds every controller of the provider. Each starts once the CRDs of the
// kinds it reads are established (safe-start): a managed resource definition
// that is not active, or a cluster without the Kyma CRD, starts nothing and
// breaks nothing.
func Setup(mgr ctrl.Manager, o Options) error {
	g := new(gate.Gate[schema.GroupVersionKind])
	o.Gate = g
	if o.SetupFailed == nil {
		o.SetupFailed = func(err error) { panic(err) }
	}
	gated := func(name string, setup func() error, needs ...schema.GroupVersionKind) {
		g.Register(func() {
			if err := setup(); err != nil {
				o.SetupFailed(fmt.Errorf("cannot set up the %s controller: %w", name, err))
			}
		}, needs...)
	}
	gated("ProviderConfig", func() error { return config.Setup(mgr, o.Options) },
		v1alpha1.ProviderConfigGroupVersionKind, v1alpha1.ProviderConfigUsageGroupVersionKind,
		v1alpha1.ClusterProviderConfigGroupVersionKind, v1alpha1.ClusterProviderConfigUsageGroupVersionKind)
	gated("IASApplication", func() error {
		return iasapplication.Setup(mgr, iasapplication.Options{
			Options: o.Options, Pool: o.IAS, PollJitter: o.PollJitter, ListSettle: o.IASListSettle, ManagementPolicies: o.ManagementPolicies, Polls: o.Polls,
		})
	}, iasv1alpha1.IASApplicationGroupVersionKind, v1alpha1.ProviderConfigUsageGroupVersionKind)
	// RuntimeSecrets watch IASApplications too.
	gated("RuntimeSecret", func() error {
		return runtimesecret.Setup(mgr, runtimesecret.Options{
			Options: o.Options, Clients: o.Runtimes, PollJitter: o.PollJitter, ManagementPolicies: o.ManagementPolicies, Polls: o.Polls,
		})
	}, runtimev1alpha1.RuntimeSecretGroupVersionKind, iasv1alpha1.IASApplicationGroupVersionKind)
	if o.KymaBridge {
		gated("kyma bridge", func() error {
			// A missing XRD is looked for again at a tenth of the poll: 30s by default.
			return kymabridge.Setup(mgr, kymabridge.Options{Logger: o.Logger, Resync: o.PollInterval, Retry: max(o.PollInterval/10, time.Second), MaxConcurrentReconciles: o.MaxConcurrentReconciles})
		}, kymabridge.KymaGroupVersionKind)
	}
	return customresourcesgate.Setup(mgr, o.Options)
}
