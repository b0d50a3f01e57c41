package iasapplication

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// Users tells which RuntimeSecrets using an application do not yet carry its
// published credentials on their runtimes.
type Users interface {
	// NotYetCarrying names them, empty if none; dataHash digests the connection
	// Secret's keys as RuntimeSecrets digest what they wrote.
	NotYetCarrying(ctx context.Context, cr *v1alpha1.IASApplication, dataHash string) (string, error)
}

// runtimeSecretUsers finds the RuntimeSecrets in the application's namespace that
// refer to it or to its connection Secret.
type runtimeSecretUsers struct {
	kube client.Reader
}

func (u runtimeSecretUsers) NotYetCarrying(ctx context.Context, cr *v1alpha1.IASApplication, dataHash string) (string, error) {
	l := &runtimev1alpha1.RuntimeSecretList{}
	if err := u.kube.List(ctx, l, client.InNamespace(cr.GetNamespace())); err != nil {
		if kmeta.IsNoMatchError(err) {
			// RuntimeSecrets are not installed: nobody carries the secret.
			return "", nil
		}
		return "", fmt.Errorf(errListUsers, err)
	}
	conn := ""
	if ref := cr.GetWriteConnectionSecretToReference(); ref != nil {
		conn = ref.Name
	}
	var behind []string
	users := 0
	for _, rs := range l.Items {
		p := rs.Spec.ForProvider
		uses := (p.ApplicationRef != nil && p.ApplicationRef.Name == cr.GetName()) ||
			(conn != "" && p.CredentialsSecretRef != nil && p.CredentialsSecretRef.Name == conn)
		if !uses || meta.WasDeleted(&rs) {
			continue
		}
		users++
		if rs.Status.AtProvider.DataHash != dataHash {
			behind = append(behind, rs.GetName())
		}
	}
	if len(behind) == 0 {
		return "", nil
	}
	slices.Sort(behind)
	const shown = 5
	names := strings.Join(behind[:min(len(behind), shown)], ", ")
	if len(behind) > shown {
		names += fmt.Sprintf(" and %d more", len(behind)-shown)
	}
	return fmt.Sprintf("%d of %d RuntimeSecrets to carry the current secret on their runtimes (%s)", len(behind), users, names), nil
}
