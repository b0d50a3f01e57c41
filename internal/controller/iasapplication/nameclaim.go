package iasapplication

import (
	"context"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// NameClaims keep one claimant per app name of a tenant and scope in the
// API server (kube.NameClaims): IAS lists a new app only seconds after its
// create, so two resources naming one app (or one resource in two workers)
// would each find none and each create one. A claim is made before a create
// and a rename, and survives a restart and a leader change.
type NameClaims interface {
	Claim(ctx context.Context, key, shown, holder string, holds func(ctx context.Context, claimant string) (bool, error)) (string, error)
	Release(ctx context.Context, key, holder string) error
}

// nameScope is what a claim is kept per: the tenant however its URL is
// written, and the scope of its credentials, the platform's ("") or a
// namespace's, so that no namespace can claim the names the platform makes.
func nameScope(t ias.Tenant) string { return ias.TenantID(t.URL) + "\n" + t.Namespace + "\n" }

// claimName makes cr the claimant of the app name, or returns an error
// naming the resource that claims it.
func (o *appOwnership) claimName(ctx context.Context, cr *v1alpha1.IASApplication, name string) error {
	if o.names == nil {
		return nil
	}
	claimant, err := o.names.Claim(ctx, o.nameScope+name, name, ownerOf(cr), func(ctx context.Context, claimant string) (bool, error) {
		return o.stillNames(ctx, claimant, name)
	})
	if err != nil {
		return errors.Wrapf(err, errClaimName, name)
	}
	if claimant != "" {
		return errors.Errorf(errNameClaimed, name, claimant)
	}
	return nil
}

// stillNames tells whether the IASApplication claimant (namespace/name) still
// exists, is not being deleted and names the app name; read from the API
// server, since a claimant created a moment ago may not be cached yet.
func (o *appOwnership) stillNames(ctx context.Context, claimant, name string) (bool, error) {
	ns, n, _ := strings.Cut(claimant, "/")
	other := &v1alpha1.IASApplication{}
	if err := o.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: n}, other); err != nil {
		if kerrors.IsNotFound(err) {
			return false, nil
		}
		return false, errors.Wrapf(err, errGetClaimant, claimant)
	}
	return !meta.WasDeleted(other) && other.AppName() == name, nil
}

// releaseName gives up cr's claim on its app name once its deletion is done.
// Best effort: a claim whose claimant is gone is taken over by the next.
func (o *appOwnership) releaseName(ctx context.Context, cr *v1alpha1.IASApplication) {
	if o.names != nil {
		_ = o.names.Release(ctx, o.nameScope+cr.AppName(), ownerOf(cr))
	}
}

// renameFree checks that no other app of the tenant carries the name cr
// renames its app to, and claims it: a rename never takes an owned name.
func (o *appOwnership) renameFree(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application) error {
	apps, err := o.ias.FindApplications(ctx, cr.AppName())
	if err != nil {
		return err
	}
	var ids []string
	for _, a := range apps {
		if a.ID != app.ID {
			ids = append(ids, a.ID)
		}
	}
	if len(ids) > 0 {
		return errors.Errorf(errRenameTaken, strings.Join(ids, ", "), cr.AppName())
	}
	return o.claimName(ctx, cr, cr.AppName())
}
