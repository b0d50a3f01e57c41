package apis

// AnnotationPrefix is the prefix of every annotation this provider reads or
// writes, as crossplane-runtime keeps crossplane.io's in its pkg/meta.
const AnnotationPrefix = "eventingauth.kyma-project.io/"

// On an EventingAuth (read by its composition function; the migration from
// eventing-auth-manager sets the first two, the kyma bridge the others).
const (
	// AnnotationApplicationID is the UUID of the app to take over; it becomes
	// the IASApplication's external name, and is removed once migrated.
	AnnotationApplicationID = AnnotationPrefix + "application-id"
	// AnnotationSecretDescription is the marker of the app's secrets; it
	// stays, so that the provider keeps recognising the secret it took over.
	AnnotationSecretDescription = AnnotationPrefix + "secret-description"
	// AnnotationKymaGlobalAccount carries the Kyma CR's global account label
	// from the bridge through the EventingAuth to the IASApplication. It is
	// not the app's globalAccount: the provider sends it only where the
	// ProviderConfig asks for it (globalAccountFromKymaLabel); by default
	// every app gets the config's, as eventing-auth-manager sent its flag's.
	AnnotationKymaGlobalAccount = AnnotationPrefix + "kyma-global-account"
	// AnnotationBridgeApplied is a digest of what the kyma bridge applied (its
	// spec, owner and poll interval): the bridge re-applies only when the
	// digest it would write differs, so a Ready runtime costs it no API write.
	AnnotationBridgeApplied = AnnotationPrefix + "bridge-applied"
)

// On an IASApplication.
const (
	// AnnotationHandOverTo, on the IASApplication that owns an IAS app, hands
	// the app to another IASApplication, named <namespace>/<name>: the owner
	// records the new owner in IAS and from then on only reads the app. Only
	// the owner can hand its app over, so a resource in another namespace
	// never takes an app by annotating itself.
	AnnotationHandOverTo = AnnotationPrefix + "hand-over-to"
	// AnnotationInheritedSecrets lists, comma-separated, the api secrets an
	// app held when this resource took it, by name or by external name (an
	// app of eventing-auth-manager or made by hand, one handed over, or its
	// own after a restore); empty for an app taken without any. A runtime may
	// hold any of them through a Secret this provider does not know of, so
	// each is retired, whatever its description, only once a RuntimeSecret
	// using this resource carries the resource's own secret and none waits
	// for it; with no such RuntimeSecret it stays.
	AnnotationInheritedSecrets = AnnotationPrefix + "inherited-secrets"
	// AnnotationUnconfirmedCreate records when a create of this resource's
	// app was sent whose answer never came (a 5xx, a timeout, a crash). While
	// it is recent, Observe also looks for a second app of this provider with
	// the same name.
	AnnotationUnconfirmedCreate = AnnotationPrefix + "unconfirmed-create"
)

// LegacyAnnotationPrefix is where AnnotationHandOverTo and
// AnnotationInheritedSecrets were kept before; both are still read there.
const LegacyAnnotationPrefix = "ias." + AnnotationPrefix

// On the provider's own objects.
const (
	// AnnotationDataOmitted marks a Secret the informer cache holds without
	// its data.
	AnnotationDataOmitted = AnnotationPrefix + "data-omitted"
	// AnnotationClaimedName names, on a name claim (a Lease), what it claims,
	// for a person.
	AnnotationClaimedName = AnnotationPrefix + "claimed-name"
)
