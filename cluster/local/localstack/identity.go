package localstack

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	pkgv1beta1 "github.com/crossplane/crossplane/apis/v2/pkg/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// providerIdentity gives a provider revision what Crossplane's Deployment
// runtime gives it, so that the provider runs with the permissions a cluster
// grants it, not as an admin: the ServiceAccount its DeploymentRuntimeConfig
// names (else the revision's name), and a Deployment the revision controls,
// through which the RBAC manager binds the revision's system ClusterRole to that
// ServiceAccount. No pod runs: the Deployment only names the ServiceAccount. It
// returns a kubeconfig of that ServiceAccount. resolved is the package as
// rewritten to the mirror.
func (r *packageRuntime) providerIdentity(ctx context.Context, rev *unstructured.Unstructured, resolved string) (string, error) {
	sa := rev.GetName()
	drc, err := r.runtimeConfig(ctx, rev, resolved)
	if err != nil {
		return "", err
	}
	if t := drc.Spec.ServiceAccountTemplate; t != nil && t.Metadata != nil && t.Metadata.Name != nil {
		sa = *t.Metadata.Name
	}
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: CrossplaneNamespace, Name: sa}}
	if err := r.s.Kube.Create(ctx, account); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", err
	}
	labels := map[string]string{"pkg.crossplane.io/revision": rev.GetName()}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: CrossplaneNamespace, Name: rev.GetName(), OwnerReferences: []metav1.OwnerReference{{
			APIVersion: rev.GetAPIVersion(), Kind: rev.GetKind(), Name: rev.GetName(), UID: rev.GetUID(),
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "package-runtime", Image: "provider"}}},
			},
		},
	}
	if err := r.s.Kube.Create(ctx, d); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", err
	}
	path := filepath.Join(r.s.Work, "serviceaccount-"+sa+".kubeconfig")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	u, err := r.s.mgmt.AddUser(envtest.User{
		Name:   "system:serviceaccount:" + CrossplaneNamespace + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + CrossplaneNamespace, "system:authenticated"},
	}, nil)
	if err != nil {
		return "", err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, kc, 0o600)
}

// runtimeConfig is the DeploymentRuntimeConfig a revision runs with, empty
// if it names none that exists: Crossplane takes it from the ImageConfig that
// best matches the resolved (rewritten) package, else from the revision.
func (r *packageRuntime) runtimeConfig(ctx context.Context, rev *unstructured.Unstructured, resolved string) (*pkgv1beta1.DeploymentRuntimeConfig, error) {
	cfg, _, _ := unstructured.NestedString(rev.Object, "spec", "runtimeConfigRef", "name")
	name, err := r.runtimeConfigFor(ctx, resolved)
	if err != nil {
		return nil, err
	}
	if name != "" {
		cfg = name
	}
	drc := &pkgv1beta1.DeploymentRuntimeConfig{}
	if err := r.s.Kube.Get(ctx, client.ObjectKey{Name: cfg}, drc); err != nil && !kerrors.IsNotFound(err) {
		return nil, err
	}
	return drc, nil
}

// runtimeConfigFor names the DeploymentRuntimeConfig of the ImageConfig whose
// matchImages prefix matches the image longest, as Crossplane picks it; empty
// when none with a runtime config matches. (crossplane-runtime's ImageConfig
// store would bring every cloud registry's keychain into this module.)
func (r *packageRuntime) runtimeConfigFor(ctx context.Context, image string) (string, error) {
	l := &pkgv1beta1.ImageConfigList{}
	if err := r.s.Kube.List(ctx, l); err != nil {
		return "", err
	}
	name, longest := "", 0
	for _, ic := range l.Items {
		if ic.Spec.Runtime == nil || ic.Spec.Runtime.ConfigReference == nil {
			continue
		}
		for _, m := range ic.Spec.MatchImages {
			if strings.HasPrefix(image, m.Prefix) && len(m.Prefix) > longest {
				name, longest = ic.Spec.Runtime.ConfigReference.Name, len(m.Prefix)
			}
		}
	}
	return name, nil
}
