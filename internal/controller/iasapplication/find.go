package iasapplication

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// duplicateWatch is how long after an unconfirmed create Observe keeps looking
// for a second app of ours with the same name: an app created then may show in
// IAS's lists only later.
const duplicateWatch = time.Hour

// mayLag tells whether the cached resource may lack the record of a create:
// it records one, or this process sent one lately. A new resource's first
// Observe reads it from the cache alone.
func (o *appOwnership) mayLag(cr *v1alpha1.IASApplication) bool {
	a := cr.GetAnnotations()
	for _, k := range []string{meta.AnnotationKeyExternalCreatePending, meta.AnnotationKeyExternalCreateSucceeded, meta.AnnotationKeyExternalCreateFailed, apis.AnnotationUnconfirmedCreate} {
		if a[k] != "" {
			return true
		}
	}
	return o.created.triedLately(cr.GetUID(), o.now())
}

// catchUp replaces cr with the API server's copy when the cache may lag
// behind the record of a create (mayLag) and the API server holds it. The
// reconcile a Create requeues may read the resource before the cache has the
// external name that Create's reconcile wrote: with the stale copy it would
// not know its app, and each of its writes would conflict and back off.
func (o *appOwnership) catchUp(ctx context.Context, cr *v1alpha1.IASApplication) {
	if meta.GetExternalName(cr) != "" || !o.mayLag(cr) {
		return
	}
	fresh := &v1alpha1.IASApplication{}
	if err := o.reader.Get(ctx, client.ObjectKeyFromObject(cr), fresh); err != nil || meta.GetExternalName(fresh) == "" {
		return
	}
	if fresh.GetUID() != cr.GetUID() {
		// Another resource of the same name: its create is not this one's.
		return
	}
	kind := cr.TypeMeta
	fresh.DeepCopyInto(cr)
	cr.TypeMeta = kind
}

// find returns the app by its UUID or, when the UUID is unknown or gone, by name;
// adopted tells that the UUID is newly learned. Observe has caught cr up
// (catchUp) before.
func (o *appOwnership) find(ctx context.Context, cr *v1alpha1.IASApplication) (*ias.Application, bool, error) {
	if id := meta.GetExternalName(cr); id != "" {
		if app, ok := o.fromInventory(ctx, cr, id); ok {
			return app, false, o.own(ctx, cr, app)
		}
		app, err := o.ias.GetApplication(ctx, id)
		switch {
		case err == nil:
			return app, false, o.own(ctx, cr, app)
		case !ias.IsNotFound(err):
			return nil, false, err
		case meta.WasDeleted(cr):
			// Gone while deleting: never look for a namesake to delete instead.
			return nil, false, nil
		case meta.ExternalCreateSucceededDuring(cr, o.listSettle):
			// Reads may lag behind the create: wait rather than make another.
			return nil, false, errors.Errorf(errNotFoundYet, id, meta.GetExternalCreateSucceeded(cr).UTC().Format(time.RFC3339))
		}
	}
	apps, err := o.ias.FindApplications(ctx, cr.AppName())
	if err != nil {
		return nil, false, err
	}
	if meta.WasDeleted(cr) {
		// Without a UUID nothing is known to be ours to delete.
		return nil, false, nil
	}
	sent, unconfirmed := unconfirmedCreate(cr)
	if unconfirmed {
		meta.AddAnnotations(cr, map[string]string{apis.AnnotationUnconfirmedCreate: sent.UTC().Format(time.RFC3339)})
	}
	apps, conflict := withoutOthers(cr, apps)
	switch len(apps) {
	case 0:
		if conflict != nil {
			// Namesakes of other resources only: none is this one's to adopt,
			// and making another would take their name.
			return nil, false, conflict
		}
		if until := sent.Add(o.listSettle); unconfirmed && o.now().Before(until) {
			breaker.RetryAt(ctx, until)
			return nil, false, errors.Errorf(errCreateUnanswered, cr.AppName(), until.UTC().Format(time.RFC3339))
		}
		return nil, false, nil
	case 1:
		return &apps[0], true, nil
	}
	keep, err := o.keepOne(ctx, cr, apps)
	if err != nil {
		return nil, false, err
	}
	return keep, true, o.deleteDuplicates(ctx, cr, keep, apps)
}

// own checks that app is cr's or no resource's before anything else is done
// with it, then deletes duplicates of cr's own.
func (o *appOwnership) own(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application) error {
	if err := ownedElsewhere(cr, app); err != nil {
		return err
	}
	return o.removeDuplicates(ctx, cr, app)
}

// withoutOthers leaves out of apps those another resource owns, and returns
// a conflict naming one of them, if any.
func withoutOthers(cr *v1alpha1.IASApplication, apps []ias.Application) ([]ias.Application, error) {
	var (
		out      []ias.Application
		conflict error
	)
	for i := range apps {
		if err := ownedElsewhere(cr, &apps[i]); err != nil {
			conflict = err
			continue
		}
		out = append(out, apps[i])
	}
	return out, conflict
}

// ours tells whether app was made by this provider for cr: it names cr as its
// owner, or carries the marker of the provider's versions that recorded no
// owner yet.
func ours(cr *v1alpha1.IASApplication, app *ias.Application) bool {
	return app.Description == ias.AppMarker || recordedOwner(app) == ownerOf(cr)
}

// fromInventory finds the app in the tenant's inventory, listed at most a poll
// ago, instead of asking IAS for it alone. An app the inventory lacks is looked
// up by its UUID: it may be newer than the listing, or gone.
func (o *appOwnership) fromInventory(ctx context.Context, cr *v1alpha1.IASApplication, id string) (*ias.Application, bool) {
	if o.inventoryAge <= 0 || meta.WasDeleted(cr) {
		return nil, false
	}
	app, found, err := o.ias.ListedApplication(ctx, id, o.inventoryAge)
	if err != nil || !found {
		return nil, false
	}
	return &app, true
}

// removeDuplicates deletes other apps of this provider named like app, for a
// while after a create whose answer was lost: such a create may have made an
// app that IAS listed only after the provider made another.
func (o *appOwnership) removeDuplicates(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application) error {
	t, err := time.Parse(time.RFC3339, cr.GetAnnotations()[apis.AnnotationUnconfirmedCreate])
	if err != nil || meta.WasDeleted(cr) || o.now().After(t.Add(duplicateWatch)) {
		return nil
	}
	apps, err := o.ias.FindApplications(ctx, cr.AppName())
	if err != nil {
		return err
	}
	return o.deleteDuplicates(ctx, cr, app, apps)
}

// keepOne picks the app to manage among several with the name. Only apps that
// carry this provider's marker are candidates for deletion, so any other namesake
// makes it an error that a person must resolve.
func (o *appOwnership) keepOne(ctx context.Context, cr *v1alpha1.IASApplication, apps []ias.Application) (*ias.Application, error) {
	var own []ias.Application
	for i := range apps {
		if ours(cr, &apps[i]) {
			own = append(own, apps[i])
		}
	}
	if len(own) < len(apps) {
		ids := make([]string, 0, len(apps))
		for _, a := range apps {
			ids = append(ids, a.ID)
		}
		return nil, errors.Errorf(errNamesakes, namesakes(cr.AppName(), ids, len(apps)-len(own)))
	}
	// The app whose client ID is already published stays; else the oldest.
	if clientID := publishedClientID(ctx, o.kube, cr); clientID != "" {
		for i := range own {
			if own[i].ClientID == clientID {
				return &own[i], nil
			}
		}
	}
	slices.SortStableFunc(own, func(a, b ias.Application) int { return a.Created.Compare(b.Created) })
	return &own[0], nil
}

// deleteDuplicates deletes the apps of this provider in apps other than keep.
func (o *appOwnership) deleteDuplicates(ctx context.Context, cr *v1alpha1.IASApplication, keep *ias.Application, apps []ias.Application) error {
	for _, a := range apps {
		if a.ID == keep.ID || !ours(cr, &a) || a.Type != ias.TypeCharged {
			continue
		}
		if err := o.ias.DeleteApplication(ctx, a.ID); err != nil && !ias.IsNotFound(err) {
			return errors.Wrapf(err, errDeleteDuplicate, appIDName(a.ID, a.Name))
		}
		o.recorder.Event(cr, event.Normal(eventDeletedDuplicate, fmt.Sprintf(
			"Deleted IAS application %s, a second application named %q that this provider created when IAS did not answer a create; application %s is kept",
			a.ID, a.Name, keep.ID)))
	}
	return nil
}

// unconfirmedCreate returns when the last create of the app was sent, if its
// outcome is unknown: it failed, or the provider stopped before it was recorded.
func unconfirmedCreate(cr *v1alpha1.IASApplication) (time.Time, bool) {
	pending := meta.GetExternalCreatePending(cr)
	if pending.IsZero() {
		return pending, false
	}
	if meta.ExternalCreateIncomplete(cr) {
		return pending, true
	}
	failed, succeeded := meta.GetExternalCreateFailed(cr), meta.GetExternalCreateSucceeded(cr)
	return pending, !failed.IsZero() && failed.After(succeeded)
}
