package iasapplication

import (
	"context"
	"fmt"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
)

// The IASApplication's connection Secret holds the only copy of its client
// secret. A deletion that keeps the app must keep that Secret too, or the
// resource made again would have to mint a new secret and change every
// runtime's credentials.

// keep is what an IASApplication's retained deletion keeps: the app in IAS,
// its api secrets and its connection Secret, which it releases from the
// garbage collector.
func keep(kube client.Client) reconciler.Keep[*v1alpha1.IASApplication] {
	return reconciler.Keep[*v1alpha1.IASApplication]{
		Kind:      v1alpha1.IASApplicationKind,
		CRD:       "iasapplications." + v1alpha1.Group,
		RuntimeID: (*v1alpha1.IASApplication).AppName,
		Release: func(ctx context.Context, cr *v1alpha1.IASApplication) (string, error) {
			what := "IAS application " + appIDName(meta.GetExternalName(cr), cr.AppName()) + " and its api secrets"
			ref := cr.GetWriteConnectionSecretToReference()
			if ref == nil {
				return what, nil
			}
			if err := releaseConnectionSecret(ctx, kube, cr, ref.Name); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s, and connection Secret %s", what, ref.Name), nil
		},
	}
}

// releaseConnectionSecret removes cr's owner references from its connection
// Secret, so that the garbage collector keeps the Secret when cr goes.
func releaseConnectionSecret(ctx context.Context, kube client.Client, cr *v1alpha1.IASApplication, name string) error {
	s := &corev1.Secret{}
	switch err := kube.Get(ctx, types.NamespacedName{Namespace: cr.GetNamespace(), Name: name}, s); {
	case kerrors.IsNotFound(err):
		return nil
	case err != nil:
		return errors.Wrapf(err, errGetConnection, name)
	}
	refs := slices.DeleteFunc(slices.Clone(s.GetOwnerReferences()), func(r metav1.OwnerReference) bool { return r.UID == cr.GetUID() })
	if len(refs) == len(s.GetOwnerReferences()) {
		return nil
	}
	s.SetOwnerReferences(refs)
	// The resourceVersion guards against a write in between.
	return errors.Wrapf(kube.Update(ctx, s), errReleaseConnection, name)
}

// adoptConnection makes cr the controller of a connection Secret that
// has none: one a retained deletion or the migration left, which holds the
// client secret of cr's app. From then on it goes with cr, as one cr made
// does. The publisher does not do this itself: it writes nothing while the
// data is unchanged.
func (k *secretKeeper) adoptConnection(ctx context.Context, cr *v1alpha1.IASApplication, conn *corev1.Secret) error {
	if conn == nil || conn.Type != resource.SecretTypeConnection || metav1.GetControllerOf(conn) != nil {
		return nil
	}
	s := conn.DeepCopy()
	s.OwnerReferences = append(s.OwnerReferences, meta.AsController(meta.TypedReferenceTo(cr, v1alpha1.IASApplicationGroupVersionKind)))
	// The resourceVersion guards against a write in between.
	return errors.Wrapf(k.kube.Update(ctx, s), errAdoptConnection, conn.GetName())
}
