package iasapplication

import (
	"context"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// observeDeletion observes a resource being deleted: its app exists for
// crossplane-runtime to delete only if IAS, asked by UUID, records the
// resource as the app's owner. Neither the external name nor the status,
// which may be stale or forged, decides a deletion.
func (e *external) observeDeletion(ctx context.Context, cr *v1alpha1.IASApplication) (managed.ExternalObservation, error) {
	if id := meta.GetExternalName(cr); id != "" && e.deleted.gone(cr.GetUID(), id, e.now()) {
		return managed.ExternalObservation{}, nil
	}
	if c, ok := e.recallCreate(cr); ok {
		return e.observeCreated(ctx, cr, c)
	}
	app, adopted, err := e.ownership.find(ctx, cr)
	if conflict := (*OwnerConflictError)(nil); errors.As(err, &conflict) {
		cr.Status.AtProvider.ID = ""
		e.recorder.Event(cr, event.Normal(eventLeftToOwner, fmt.Sprintf("Left IAS application %s to its owner, IASApplication %s", conflict.App, conflict.Owner)))
		return managed.ExternalObservation{}, nil
	}
	if err != nil || app == nil {
		return managed.ExternalObservation{}, err
	}
	if err := e.ownership.take(cr, app, adopted); err != nil {
		return managed.ExternalObservation{}, err
	}
	return e.deletionOf(cr, app), nil
}

// deletionOf tells whether the deletion of cr deletes app: only if IAS
// records cr as its owner now. An app with no owner recorded was never stamped
// by cr, so it is not cr's to delete either.
func (e *external) deletionOf(cr *v1alpha1.IASApplication, app *ias.Application) managed.ExternalObservation {
	if owner := recordedOwner(app); owner != ownerOf(cr) {
		e.recorder.Event(cr, event.Normal(eventLeftToOwner, fmt.Sprintf("Left IAS application %s: IAS records %s as its owner", appIDName(app.ID, app.Name), ownerName(owner))))
		return managed.ExternalObservation{}
	}
	// Only existence matters now: its secrets go with it.
	return managed.ExternalObservation{ResourceExists: true}
}
