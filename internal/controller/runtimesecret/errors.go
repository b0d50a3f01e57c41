package runtimesecret

import (
	"fmt"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// Errors of this controller, used with crossplane-runtime's errors.Wrapf and
// Errorf, at most two arguments each: tests build the errors they expect from
// the same constants. A Secret on a runtime is named namespace/name.
const (
	// errReadKubeconfig: the kubeconfig Secret (namespace/name).
	errReadKubeconfig = "cannot read the kubeconfig Secret %s"
	// errKubeconfigKey: the kubeconfig Secret, the key it lacks.
	errKubeconfigKey = "the kubeconfig Secret %s has no key %q"
	// errKubeconfigRefused: the kubeconfig Secret, its key.
	errKubeconfigRefused = "the kubeconfig in Secret %s (key %q)"
	// errReadOnRuntime, errCreateOnRuntime, errUpdateOnRuntime,
	// errDeleteOnRuntime: the Secret, the runtime ID.
	errReadOnRuntime   = "cannot read Secret %s on runtime %s"
	errCreateOnRuntime = "cannot create Secret %s on runtime %s"
	errUpdateOnRuntime = "cannot update Secret %s on runtime %s"
	errDeleteOnRuntime = "cannot delete Secret %s on runtime %s"
	// errNotOurs: the Secret, the runtime ID.
	errNotOurs = "Secret %s on runtime %s was not created by this provider (it lacks the label " +
		v1alpha1.LabelManagedBy + "=" + v1alpha1.ManagedBy + "), so it is left alone: delete it, or add the label to hand it over " +
		"(eventing-auth-migrate does so for a Secret eventing-auth-manager wrote)"
	// errReadApplication: the IASApplication's name.
	errReadApplication = "cannot read the IASApplication %s"
	errNoCredentials   = "spec.forProvider.credentialsSecretRef is not set and applicationRef resolved to nothing"
	// errReadCredentials: the credentials Secret (namespace/name).
	errReadCredentials = "cannot read the credentials Secret %s"
	// errNoNamespace: the namespace, the runtime ID.
	errNoNamespace = "namespace %s does not exist on runtime %s; the provider never creates it, and retries until it exists"
	// noteDeletion: when a deletion held up by an unreachable runtime completes.
	noteDeletion = "; if the runtime stays unreachable, the deletion completes at %s without removing the Secret"
)

// noted is an error with a note after its message, for what the error's
// reader should know next (when a held-up deletion completes).
type noted struct {
	error
	note string
}

func (n noted) Error() string { return n.error.Error() + n.note }
func (n noted) Unwrap() error { return n.error }

// withNote adds note to err; an empty note adds nothing.
func withNote(err error, note string) error {
	if note == "" {
		return err
	}
	return noted{error: err, note: note}
}

// secretName is how errors name a Secret on a runtime.
func secretName(namespace, name string) string { return fmt.Sprintf("%s/%s", namespace, name) }
