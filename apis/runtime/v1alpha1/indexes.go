package v1alpha1

import "sigs.k8s.io/controller-runtime/pkg/client"

// Field indexes of RuntimeSecrets in the provider's cache: the RuntimeSecret
// controller registers them, and every controller that looks up the
// RuntimeSecrets using a Secret or an IASApplication reads them, rather than
// listing the whole namespace for each lookup.
const (
	// IndexSecrets names the Secrets a RuntimeSecret reads (SecretsRead).
	IndexSecrets = "runtimesecret.secrets"
	// IndexApplication names the IASApplication a RuntimeSecret references
	// (ApplicationReferenced).
	IndexApplication = "runtimesecret.application"
)

// SecretsRead names the Secrets a RuntimeSecret reads: its kubeconfig and its
// credentials.
func SecretsRead(o client.Object) []string {
	rs := o.(*RuntimeSecret) //nolint:forcetypeassert // Indexes of RuntimeSecrets only.
	kubeconfig, _ := rs.KubeconfigSecret()
	out := []string{kubeconfig}
	if ref := rs.Spec.ForProvider.CredentialsSecretRef; ref != nil {
		out = append(out, ref.Name)
	}
	return out
}

// ApplicationReferenced names the IASApplication a RuntimeSecret references.
func ApplicationReferenced(o client.Object) []string {
	if ref := o.(*RuntimeSecret).Spec.ForProvider.ApplicationRef; ref != nil { //nolint:forcetypeassert // As above.
		return []string{ref.Name}
	}
	return nil
}
