package runtimesecret

import (
	"context"
	"reflect"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// users maps an object to the RuntimeSecrets in its namespace that name it in
// the given index.
func users(c client.Reader, index string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		return requests(usersOf(ctx, c, o, index))
	}
}

// usersOf are shallow copies of the cache's objects, to be read only: every
// change of a Secret in the namespace asks.
func usersOf(ctx context.Context, c client.Reader, o client.Object, index string) []v1alpha1.RuntimeSecret {
	l := &v1alpha1.RuntimeSecretList{}
	if err := c.List(ctx, l, client.InNamespace(o.GetNamespace()), client.MatchingFields{index: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	return l.Items
}

func requests(rs []v1alpha1.RuntimeSecret) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(rs))
	for i := range rs {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: rs[i].Namespace, Name: rs[i].Name}})
	}
	return out
}

// readers maps a Secret to the RuntimeSecrets that read it: as their
// kubeconfig, or as their credentials. A RuntimeSecret whose credentials are
// the connection Secret of an IASApplication that is not Ready is left out:
// it waits for that readiness, whose change wakes it (readinessChanged), and
// an application publishes its Secret before it becomes Ready.
func readers(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		rs := usersOf(ctx, c, o, indexSecrets)
		out := rs[:0]
		for i := range rs {
			if !waitsForApplication(ctx, c, &rs[i], o.GetName()) {
				out = append(out, rs[i])
			}
		}
		return requests(out)
	}
}

// waitsForApplication tells whether rs reads the Secret named secret as the
// connection Secret of an IASApplication that is not Ready, or not there.
func waitsForApplication(ctx context.Context, c client.Reader, rs *v1alpha1.RuntimeSecret, secret string) bool {
	p := rs.Spec.ForProvider
	if p.ApplicationRef == nil || p.CredentialsSecretRef == nil || p.CredentialsSecretRef.Name != secret {
		return false
	}
	if kubeconfig, _ := rs.KubeconfigSecret(); kubeconfig == secret {
		return false
	}
	app := &iasv1alpha1.IASApplication{}
	switch err := c.Get(ctx, types.NamespacedName{Namespace: rs.Namespace, Name: p.ApplicationRef.Name}, app); {
	case resource.IgnoreNotFound(err) != nil:
		return false
	case err != nil:
		return true // its creation wakes rs
	}
	return !resource.IsConditionTrue(app.GetCondition(xpv2.TypeReady))
}

// readinessChanged passes an IASApplication's creation, deletion and the updates
// that make it Ready or no longer Ready, or change its connection Secret: all a
// RuntimeSecret waits for. Its other status updates, its first Creating among
// them, would wake every waiting RuntimeSecret for nothing.
func readinessChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		was, okOld := e.ObjectOld.(*iasv1alpha1.IASApplication)
		is, okNew := e.ObjectNew.(*iasv1alpha1.IASApplication)
		if !okOld || !okNew {
			return true
		}
		return resource.IsConditionTrue(was.GetCondition(xpv2.TypeReady)) != resource.IsConditionTrue(is.GetCondition(xpv2.TypeReady)) ||
			!reflect.DeepEqual(was.GetWriteConnectionSecretToReference(), is.GetWriteConnectionSecretToReference()) ||
			was.GetDeletionTimestamp().IsZero() != is.GetDeletionTimestamp().IsZero()
	}}
}

// referenceResolved passes the write of a resolved applicationRef: the
// credentials Secret filled in where there was none, and nothing else
// changed. The reconcile that resolved it goes on with it, so waking another
// only observes again what it found.
func referenceResolved() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			was, okOld := e.ObjectOld.(*v1alpha1.RuntimeSecret)
			is, okNew := e.ObjectNew.(*v1alpha1.RuntimeSecret)
			if !okOld || !okNew || was.Spec.ForProvider.CredentialsSecretRef != nil ||
				is.Spec.ForProvider.ApplicationRef == nil || is.Spec.ForProvider.CredentialsSecretRef == nil {
				return false
			}
			spec := was.Spec.DeepCopy()
			spec.ForProvider.CredentialsSecretRef = is.Spec.ForProvider.CredentialsSecretRef
			return equality.Semantic.DeepEqual(*spec, is.Spec) &&
				equality.Semantic.DeepEqual(was.GetLabels(), is.GetLabels()) &&
				equality.Semantic.DeepEqual(was.GetAnnotations(), is.GetAnnotations()) &&
				was.GetDeletionTimestamp().IsZero() == is.GetDeletionTimestamp().IsZero()
		},
	}
}
