// Package apis contains the provider's API groups.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
)

// AddToScheme adds every API group of the provider to a scheme.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		v1alpha1.AddToScheme,
		iasv1alpha1.AddToScheme,
		runtimev1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}
