package iasapplication

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
)

// appOwnership finds a resource's app and decides whose it is: by UUID or by
// name, adopting an app no resource owns, never one another owns; it deletes
// duplicates of a create whose answer was lost, claims names before a create
// or a rename, and checks a hand-over's target. It lives for one reconcile.
type appOwnership struct {
	ias      inventory.Client
	kube     client.Client
	reader   client.Reader // uncached
	recorder event.Recorder
	created  *created
	// names claims app names before a create or a rename; nil claims none.
	names NameClaims
	// nameScope prefixes the keys of this resource's name claims (nameScope).
	nameScope string
	// listSettle is how long after a create without answer IAS's lists are
	// trusted to show the app, if it was made.
	listSettle time.Duration
	// inventoryAge is how old the tenant's app inventory may be (the poll);
	// 0: no inventory.
	inventoryAge time.Duration
	now          func() time.Time
}

// take checks that app is one this provider may manage and, if it was found
// by name, records it as the resource's (adoption).
func (o *appOwnership) take(cr *v1alpha1.IASApplication, app *ias.Application, adopted bool) error {
	if app.Type != ias.TypeCharged {
		return errors.Errorf(errNotCharged, appIDName(app.ID, app.Name), app.Type)
	}
	if adopted {
		meta.SetExternalName(cr, app.ID)
		o.recorder.Event(cr, event.Normal(eventAdopted, fmt.Sprintf("Adopted the existing IAS application %s named %q", app.ID, app.Name)))
	}
	return nil
}

// An IAS app's owner is recorded in IAS itself, in its description, so that
// it holds for a second provider on the same tenant and across a backup
// restore: by namespace and name, not UID, so that the same resource made
// again (restored, re-composed, re-created after an orphaning deletion) keeps
// its app.
const ownerPrefix = ias.AppMarker + " for IASApplication "

// ownerOf names cr as an owner.
func ownerOf(cr *v1alpha1.IASApplication) string { return cr.GetNamespace() + "/" + cr.GetName() }

// OwnedDescription is the description of an app that cr owns, as the
// provider records it in IAS.
func OwnedDescription(cr *v1alpha1.IASApplication) string { return ownedDescription(ownerOf(cr)) }

// ownedDescription is the description of an app owned by owner.
func ownedDescription(owner string) string { return ownerPrefix + owner }

// recordedOwner is the owner an app's description names; "" when it names
// none (an app of eventing-auth-manager, made by hand, or made by this
// provider before owners were recorded).
func recordedOwner(app *ias.Application) string {
	owner, ok := strings.CutPrefix(app.Description, ownerPrefix)
	if !ok {
		return ""
	}
	return owner
}

// wantedOwner is the owner cr records in its app: the hand-over's target, or cr.
func wantedOwner(cr *v1alpha1.IASApplication) (string, error) {
	to, ok := annotation(cr, apis.AnnotationHandOverTo)
	if !ok {
		return ownerOf(cr), nil
	}
	ns, name, found := strings.Cut(to, "/")
	if !found || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", errors.Errorf(errHandOverTarget, apis.AnnotationHandOverTo, to)
	}
	return to, nil
}

// claimsHandOver checks that the hand-over's target asks for the app: it
// exists and names the app, by forProvider.name or by external name. The owner
// alone cannot push its app onto a resource that did not ask for it.
func (o *appOwnership) claimsHandOver(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application) error {
	to, err := wantedOwner(cr)
	if err != nil {
		return err
	}
	ns, name, _ := strings.Cut(to, "/")
	target := &v1alpha1.IASApplication{}
	if err := o.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, target); err != nil {
		if kerrors.IsNotFound(err) {
			return errors.Errorf(errHandOverUnclaimed, appIDName(app.ID, app.Name), to, "it does not exist")
		}
		return errors.Wrapf(err, errGetHandOverTarget, to)
	}
	if target.AppName() != app.Name && meta.GetExternalName(target) != app.ID {
		return errors.Errorf(errHandOverUnclaimed, appIDName(app.ID, app.Name), to,
			fmt.Sprintf("its forProvider.name is %q and its external name %q", target.AppName(), meta.GetExternalName(target)))
	}
	return nil
}

// handingOver tells whether cr hands its app to another resource.
func handingOver(cr *v1alpha1.IASApplication) bool {
	to, err := wantedOwner(cr)
	return err == nil && to != ownerOf(cr)
}

// OwnerConflictError is an app that another IASApplication owns.
type OwnerConflictError struct {
	App   string // as appIDName names it
	Owner string
	Self  string
}

func (e *OwnerConflictError) Error() string {
	return fmt.Sprintf("IAS application %s belongs to IASApplication %s, as recorded in IAS: this resource only reads it and never changes, gives a secret to or deletes it. "+
		"To hand it to this resource, annotate %s with %s=%s", e.App, e.Owner, e.Owner, apis.AnnotationHandOverTo, e.Self)
}

// ownedElsewhere returns an OwnerConflictError when another resource owns app.
func ownedElsewhere(cr *v1alpha1.IASApplication, app *ias.Application) error {
	owner := recordedOwner(app)
	if owner == "" || owner == ownerOf(cr) {
		return nil
	}
	return &OwnerConflictError{App: appIDName(app.ID, app.Name), Owner: owner, Self: ownerOf(cr)}
}
