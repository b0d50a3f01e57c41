package v1alpha1

// The labels of the Secrets a RuntimeSecret writes on its runtime.
//
// LabelManagedBy marks them as the provider's: a Secret without it is never
// overwritten or deleted; migration from eventing-auth-manager adds it to the
// Secrets it hands over.
//
// LabelWatchedBy is what the runtime-watcher's Watcher CR (cluster/watcher.yaml)
// selects: the webhook on each runtime reports a change of a Secret so labelled
// to the provider within a second, instead of at the next poll.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "provider-eventing-auth"
	LabelWatchedBy = "operator.kyma-project.io/watched-by"
	WatchedBy      = "provider-eventing-auth"
)

// SecretLabels returns the labels every Secret a RuntimeSecret writes carries.
func SecretLabels() map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelWatchedBy: WatchedBy}
}
