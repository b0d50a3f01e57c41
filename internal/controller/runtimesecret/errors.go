package runtimesecret

// Errors of this controller, as their format strings: tests build the errors
// they expect from the same constants.
const (
	// errReadKubeconfig: the kubeconfig Secret (namespace/name), the cause.
	errReadKubeconfig = "cannot read the kubeconfig Secret %s: %w"
	// errKubeconfigKey: the kubeconfig Secret, the key it lacks.
	errKubeconfigKey = "the kubeconfig Secret %s has no key %q"
	// errKubeconfigRefused: the kubeconfig Secret, its key, why it is refused.
	errKubeconfigRefused = "the kubeconfig in Secret %s (key %q): %w"
	// errReadOnRuntime: namespace, name, runtime ID, the cause, noteDeletion.
	errReadOnRuntime = "cannot read Secret %s/%s on runtime %s: %w%s"
	// errNotOurs: namespace, name, runtime ID, the label's key and value.
	errNotOurs = "Secret %s/%s on runtime %s was not created by this provider (it lacks the label %s=%s), so it is left alone: delete it, or add the label to hand it over"
	// errReadApplication: the IASApplication's name, the cause.
	errReadApplication = "cannot read the IASApplication %s: %w"
	errNoCredentials   = "spec.forProvider.credentialsSecretRef is not set and applicationRef resolved to nothing"
	// errReadCredentials: the credentials Secret (namespace/name), the cause.
	errReadCredentials = "cannot read the credentials Secret %s: %w"
	// errNoNamespace: the namespace, the runtime ID.
	errNoNamespace = "namespace %s does not exist on runtime %s; the provider never creates it, and retries until it exists"
	// errCreateOnRuntime, errUpdateOnRuntime: namespace, name, runtime ID, the cause.
	errCreateOnRuntime = "cannot create Secret %s/%s on runtime %s: %w"
	errUpdateOnRuntime = "cannot update Secret %s/%s on runtime %s: %w"
	// errDeleteOnRuntime: namespace, name, runtime ID, the cause, noteDeletion.
	errDeleteOnRuntime = "cannot delete Secret %s/%s on runtime %s: %w%s"
	// noteDeletion: when a deletion held up by an unreachable runtime completes.
	noteDeletion = "; if the runtime stays unreachable, the deletion completes at %s without removing the Secret"
)
