package iasapplication

// Errors of this controller, as their format strings: tests build the errors
// they expect from the same constants.
const (
	errTrackUsage = "cannot track ProviderConfig usage: %w"
	// errNotCharged: IAS application ID, name, meta.type.
	errNotCharged = "IAS application %s (%q) is of type %q, not a customer-created (charged) application; the provider never manages it"
	// errNotFoundYet: IAS application ID, when its create succeeded.
	errNotFoundYet = "IAS application %s, created at %s, is not found yet; IAS's reads may lag behind its writes, so it is looked for again before anything is created"
	// errCreateUnanswered: app name, when the create was sent, until when it
	// is waited for.
	errCreateUnanswered = "the create of IAS application %q sent at %s got no answer, and IAS does not list the application yet; " +
		"IAS lists new applications only after some seconds, so it is created again only if it is still not listed at %s"
	// errNamesakes: how many apps, their name, their IDs, how many are not ours.
	errNamesakes = "found %d IAS applications named %q (%s), %d of them not created by this provider; expected at most one. " +
		"None was changed or deleted: remove the extra ones in IAS"
	// errDeleteDuplicate: the duplicate's ID and name, then the cause.
	errDeleteDuplicate = "cannot delete the duplicate IAS application %s named %q: %w"
	// errGetConnection: the connection Secret's name, then the cause.
	errGetConnection = "cannot get connection Secret %s: %w"
	errPublish       = "cannot publish the new client secret: %w"
	errListUsers     = "cannot list the RuntimeSecrets that use this application: %w"
)
