package iasapplication

import (
	"fmt"
	"strings"
)

// Errors of this controller, used with crossplane-runtime's errors.Wrap,
// Wrapf and Errorf, at most two arguments each: tests build the errors they
// expect from the same constants. An app is named as appIDName names it.
const (
	errTrackUsage = "cannot track ProviderConfig usage"
	// errNameClaimed: the app name, the claimant (namespace/name).
	errNameClaimed = "IAS application name %q is claimed by IASApplication %s, which creates or renames an application of that name: a name holds one application, so this resource makes none; give it another forProvider.name, or delete the other"
	// errClaimName: the app name.
	errClaimName = "cannot claim IAS application name %q"
	// errGetClaimant: the claimant.
	errGetClaimant = "cannot get IASApplication %s, which claims the name"
	// errRenameTaken: the other apps' IDs, the name.
	errRenameTaken = "IAS application(s) %s already carry the name %q: this resource's application is not renamed to it, since a name holds one application; choose another forProvider.name, or remove the other in IAS"
	// errNotCharged: the app, its meta.type.
	errNotCharged = "IAS application %s is of type %q, not a customer-created (charged) application; the provider never manages it"
	// errNotFoundYet: IAS application ID, when its create succeeded.
	errNotFoundYet = "IAS application %s, created at %s, is not found yet; IAS's reads may lag behind its writes, so it is looked for again before anything is created"
	// errCreateUnanswered: app name, until when it is waited for.
	errCreateUnanswered = "the create of IAS application %q got no answer, and IAS does not list the application yet; " +
		"IAS lists new applications only after some seconds, so it is created again only if it is still not listed at %s"
	// errNamesakes: the apps found, as namesakes says them.
	errNamesakes = "found %s; expected at most one. " +
		"None was changed or deleted: remove the extra ones in IAS"
	// errDeleteDuplicate: the duplicate.
	errDeleteDuplicate = "cannot delete the duplicate IAS application %s"
	// errGetConnection: the connection Secret's name.
	errGetConnection = "cannot get connection Secret %s"
	// errReleaseConnection, errAdoptConnection: the connection Secret's name.
	errReleaseConnection = "cannot release connection Secret %s from the garbage collector"
	errAdoptConnection   = "cannot take up connection Secret %s"
	errPublish           = "cannot publish the new client secret"
	errListUsers         = "cannot list the RuntimeSecrets that use this application"
	// errHandOverTarget: the annotation, its value.
	errHandOverTarget = "annotation %s must name an IASApplication as <namespace>/<name>, not %q"
	// errGetHandOverTarget: the target.
	errGetHandOverTarget = "cannot get IASApplication %s, the hand-over's target"
	// errHandOverUnclaimed: the target, the app, what is missing.
	errHandOverUnclaimed = "hand-over of IAS application %s waits for IASApplication %s to name it: %s"
)

// appNamed is how errors name an app: its ID and its name.
func appIDName(id, name string) string { return fmt.Sprintf("%s (%q)", id, name) }

// namesakes says which apps of one name were found, and how many of them are
// not this provider's.
func namesakes(name string, ids []string, notOurs int) string {
	return fmt.Sprintf("%d IAS applications named %q (%s), %d of them not created by this provider", len(ids), name, strings.Join(ids, ", "), notOurs)
}
