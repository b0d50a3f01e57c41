// Package controller wires the provider's controllers into a manager.
package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kyma-project/provider-eventing-auth/internal/controller/config"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
)

// Setup adds every controller of the provider.
func Setup(mgr ctrl.Manager, o iasapplication.Options) error {
	if err := config.Setup(mgr, o.Options); err != nil {
		return err
	}
	return iasapplication.Setup(mgr, o)
}
