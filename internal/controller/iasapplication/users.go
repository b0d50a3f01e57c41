package iasapplication

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// Users tells which RuntimeSecrets using an application do not yet carry its
// published credentials on their runtimes.
type Users interface {
	// NotYetCarrying names them, empty if none, and counts those that carry
	// them; dataHash digests the connection Secret's keys as RuntimeSecrets
	// digest what they wrote.
	NotYetCarrying(ctx context.Context, cr *v1alpha1.IASApplication, dataHash string) (waiting string, carrying int, err error)
}

// runtimeSecretUsers finds the RuntimeSecrets in the application's namespace that
// refer to it or to its connection Secret.
type runtimeSecretUsers struct {
	kube client.Reader
}

func (u runtimeSecretUsers) NotYetCarrying(ctx context.Context, cr *v1alpha1.IASApplication, dataHash string) (string, int, error) {
	using, err := usingRuntimeSecrets(ctx, u.kube, cr)
	if err != nil {
		return "", 0, err
	}
	var behind []string
	users := 0
	for _, rs := range using {
		if meta.WasDeleted(rs) {
			continue
		}
		users++
		if rs.Status.AtProvider.DataHash != dataHash {
			behind = append(behind, rs.GetName())
		}
	}
	if len(behind) == 0 {
		return "", users, nil
	}
	slices.Sort(behind)
	return fmt.Sprintf("%d of %d RuntimeSecrets to carry the current secret on their runtimes (%s)", len(behind), users, fewNames(behind)), users - len(behind), nil
}

// usingRuntimeSecrets lists the RuntimeSecrets in the app's namespace that
// refer to it or to its connection Secret, deleting or not. They are the
// cache's own objects, to be read only, found by the RuntimeSecret
// controller's field indexes: a mass deletion asks once per deleted app, and a
// list of the whole namespace each time cost the provider most of its CPU.
// Until that controller has registered its indexes (it starts once its CRD
// is served), the whole namespace is listed.
func usingRuntimeSecrets(ctx context.Context, kube client.Reader, cr *v1alpha1.IASApplication) ([]*runtimev1alpha1.RuntimeSecret, error) {
	lookups := []client.MatchingFields{{runtimev1alpha1.IndexApplication: cr.GetName()}}
	if conn := cr.GetWriteConnectionSecretToReference(); conn != nil && conn.Name != "" {
		lookups = append(lookups, client.MatchingFields{runtimev1alpha1.IndexSecrets: conn.Name})
	}
	var out []*runtimev1alpha1.RuntimeSecret
	for _, by := range lookups {
		l := &runtimev1alpha1.RuntimeSecretList{}
		err := kube.List(ctx, l, client.InNamespace(cr.GetNamespace()), by, client.UnsafeDisableDeepCopy)
		if err != nil && !kmeta.IsNoMatchError(err) {
			// No such index yet: one list of the namespace answers for all
			// lookups.
			return listedUsers(ctx, kube, cr)
		}
		if err != nil {
			// RuntimeSecrets are not installed: nobody uses the app.
			return nil, nil
		}
		for i := range l.Items {
			rs := &l.Items[i]
			if uses(rs, cr) && !slices.ContainsFunc(out, func(o *runtimev1alpha1.RuntimeSecret) bool { return o.GetName() == rs.GetName() }) {
				out = append(out, rs)
			}
		}
	}
	return out, nil
}

// listedUsers is usingRuntimeSecrets from a list of the whole namespace.
func listedUsers(ctx context.Context, kube client.Reader, cr *v1alpha1.IASApplication) ([]*runtimev1alpha1.RuntimeSecret, error) {
	l := &runtimev1alpha1.RuntimeSecretList{}
	if err := kube.List(ctx, l, client.InNamespace(cr.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		if kmeta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, errors.Wrap(err, errListUsers)
	}
	var out []*runtimev1alpha1.RuntimeSecret
	for i := range l.Items {
		if uses(&l.Items[i], cr) {
			out = append(out, &l.Items[i])
		}
	}
	return out, nil
}

// uses tells whether RuntimeSecret rs copies the app's credentials.
func uses(rs *runtimev1alpha1.RuntimeSecret, cr *v1alpha1.IASApplication) bool {
	p := rs.Spec.ForProvider
	if p.ApplicationRef != nil && p.ApplicationRef.Name == cr.GetName() {
		return true
	}
	conn := cr.GetWriteConnectionSecretToReference()
	return conn != nil && conn.Name != "" && p.CredentialsSecretRef != nil && p.CredentialsSecretRef.Name == conn.Name
}

// fewNames lists the first five of names, and how many more there are.
func fewNames(names []string) string {
	const shown = 5
	out := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		out += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return out
}
