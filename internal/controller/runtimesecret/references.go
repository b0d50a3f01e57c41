package runtimesecret

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// references resolves a RuntimeSecret's applicationRef, and hands it to
// crossplane-runtime's resolver (which writes the result) only when that
// changes spec.forProvider: once in a RuntimeSecret's life, as a rule. That
// resolver compares the whole resource before and after with go-cmp on every
// reconcile, which cost more CPU than the rest of a RuntimeSecret's reconcile
// that waits for its IASApplication.
//
// On a RuntimeSecret's first reconcile, before it has crossplane-runtime's
// finalizer, the resolution is left in memory: crossplane-runtime adds the
// finalizer after Observe in the same reconcile with an Update of the whole
// resource, which writes both at once (one write per RuntimeSecret fewer). A
// reconcile that ends before that resolves again the next time.
type references struct {
	kube  client.Reader
	write managed.ReferenceResolver
}

func (r references) ResolveReferences(ctx context.Context, mg resource.Managed) error {
	rs, ok := mg.(*v1alpha1.RuntimeSecret)
	if !ok {
		return r.write.ResolveReferences(ctx, mg)
	}
	resolved := rs.DeepCopy()
	err := resolved.ResolveReferences(ctx, r.kube)
	switch {
	case err != nil:
	case equality.Semantic.DeepEqual(resolved.Spec.ForProvider, rs.Spec.ForProvider):
		return nil
	case !meta.FinalizerExists(rs, managed.FinalizerName):
		rs.Spec.ForProvider = resolved.Spec.ForProvider
		return nil
	}
	// Changed, or failed: crossplane-runtime's resolver resolves again, writes
	// the change and words the error as for any managed resource.
	return r.write.ResolveReferences(ctx, mg)
}
