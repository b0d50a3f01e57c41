package v1alpha1

import (
	"context"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reference"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
)

// ConnectionSecretName extracts the name of an IASApplication's connection
// Secret; empty while it has none, which the resolver reports as not ready.
func ConnectionSecretName() reference.ExtractValueFn {
	return func(mg resource.Managed) string {
		app, ok := mg.(*iasv1alpha1.IASApplication)
		if !ok || app.Spec.WriteConnectionSecretToReference == nil {
			return ""
		}
		return app.Spec.WriteConnectionSecretToReference.Name
	}
}

// ResolveReferences sets credentialsSecretRef from applicationRef or
// applicationSelector. It is written by hand because the resolved value is the
// name inside credentialsSecretRef, a shape angryjet's markers cannot express;
// the resolution itself is crossplane-runtime's.
func (mg *RuntimeSecret) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	// The credentials Secret is read from this namespace, so the application
	// must live here too.
	if p.ApplicationRef != nil && p.ApplicationRef.Namespace != "" && p.ApplicationRef.Namespace != mg.GetNamespace() {
		return fmt.Errorf("spec.forProvider.applicationRef: namespace %q is not the resource's own namespace %q", p.ApplicationRef.Namespace, mg.GetNamespace())
	}
	current := ""
	if p.CredentialsSecretRef != nil {
		current = p.CredentialsSecretRef.Name
	}
	rsp, err := reference.NewAPINamespacedResolver(c, mg).Resolve(ctx, reference.NamespacedResolutionRequest{
		CurrentValue: current,
		Extract:      ConnectionSecretName(),
		Namespace:    mg.GetNamespace(),
		Reference:    p.ApplicationRef,
		Selector:     p.ApplicationSelector,
		To: reference.To{
			List:    &iasv1alpha1.IASApplicationList{},
			Managed: &iasv1alpha1.IASApplication{},
		},
	})
	if err != nil {
		return fmt.Errorf("spec.forProvider.applicationRef: %w", err)
	}
	if rsp.ResolvedValue != "" {
		p.CredentialsSecretRef = &xpv2.LocalSecretReference{Name: rsp.ResolvedValue}
	}
	p.ApplicationRef = rsp.ResolvedReference
	return nil
}
