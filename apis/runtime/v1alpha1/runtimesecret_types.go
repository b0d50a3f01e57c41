package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of a RuntimeSecret.
const (
	DefaultKubeconfigKey   = "config"
	DefaultTargetNamespace = "kyma-system"
	DefaultTargetName      = "eventing-webhook-auth"
	// DefaultKubeconfigPrefix and the runtime ID name the kubeconfig Secret.
	DefaultKubeconfigPrefix = "kubeconfig-"
)

// RuntimeSecretParameters are the configurable fields of a RuntimeSecret.
// +kubebuilder:validation:XValidation:rule="!has(self.applicationSelector) || !has(self.applicationSelector.__namespace__)",message="applicationSelector selects in the resource's own namespace; namespace must not be set"
// +kubebuilder:validation:XValidation:rule="has(self.credentialsSecretRef) || has(self.applicationRef) || has(self.applicationSelector)",message="one of credentialsSecretRef, applicationRef or applicationSelector is required"
type RuntimeSecretParameters struct {
	// RuntimeID of the Kyma runtime. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="runtimeId is immutable"
	RuntimeID string `json:"runtimeId"`

	// KubeconfigSecretRef locates the runtime's kubeconfig in a Secret in the
	// resource's namespace. The name defaults to kubeconfig-<runtimeId>. Only
	// inline credentials are accepted: exec and auth-provider plugins and file
	// paths are refused.
	// +optional
	// +kubebuilder:default={}
	KubeconfigSecretRef KubeconfigSecretReference `json:"kubeconfigSecretRef,omitempty"`

	// Target is the Secret written on the runtime. Immutable, so that a Secret
	// once written is never left behind.
	// +optional
	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="target is immutable"
	Target TargetSecret `json:"target,omitempty"`

	// CredentialsSecretRef names a Secret in the resource's namespace with the
	// keys client_id, client_secret, token_url and certs_url. Set it directly, or
	// let applicationRef or applicationSelector resolve it to an IASApplication's
	// connection Secret.
	// +optional
	CredentialsSecretRef *xpv2.LocalSecretReference `json:"credentialsSecretRef,omitempty"`

	// ApplicationRef refers to an IASApplication in the resource's namespace;
	// its connection Secret becomes credentialsSecretRef. A namespace, if set,
	// must be the resource's own.
	// +optional
	ApplicationRef *xpv2.NamespacedReference `json:"applicationRef,omitempty"`

	// ApplicationSelector selects an IASApplication in the resource's namespace
	// by labels, to set applicationRef.
	// +optional
	ApplicationSelector *xpv2.NamespacedSelector `json:"applicationSelector,omitempty"`
}

// KubeconfigSecretReference locates a kubeconfig in a Secret.
type KubeconfigSecretReference struct {
	// Name of the Secret. Defaults to kubeconfig-<runtimeId>.
	// +optional
	Name string `json:"name,omitempty"`

	// Key of the kubeconfig in the Secret.
	// +optional
	// +kubebuilder:default=config
	Key string `json:"key,omitempty"`
}

// TargetSecret is the namespace and name of the Secret on the runtime.
type TargetSecret struct {
	// Namespace on the runtime. It must exist; the provider never creates it.
	// +optional
	// +kubebuilder:default=kyma-system
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace,omitempty"`

	// Name of the Secret.
	// +optional
	// +kubebuilder:default=eventing-webhook-auth
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name,omitempty"`
}

// RuntimeSecretObservation is the observed state of the Secret on the runtime.
// It never holds the Secret's data.
type RuntimeSecretObservation struct {
	// ClusterID is the runtime ID of the cluster that holds the Secret.
	ClusterID string `json:"clusterId,omitempty"`

	// NamespacedName of the Secret on the runtime.
	NamespacedName string `json:"namespacedName,omitempty"`

	// DataHash is a SHA-256 digest of the data on the runtime, to tell that it
	// changed without showing it.
	DataHash string `json:"dataHash,omitempty"`
}

// A RuntimeSecretSpec defines the desired state of a RuntimeSecret.
type RuntimeSecretSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              RuntimeSecretParameters `json:"forProvider"`
}

// A RuntimeSecretStatus represents the observed state of a RuntimeSecret.
type RuntimeSecretStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 RuntimeSecretObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A RuntimeSecret keeps a Secret with an IAS application's credentials (keys
// client_id, client_secret, token_url, certs_url) on a Kyma runtime, by default
// kyma-system/eventing-webhook-auth. It reads the runtime's kubeconfig from the
// Secret kubeconfig-<runtimeId> and never touches a Secret it did not create.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="RUNTIME",type="string",JSONPath=".spec.forProvider.runtimeId"
// +kubebuilder:printcolumn:name="TARGET",type="string",JSONPath=".status.atProvider.namespacedName"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,eventing-auth}
type RuntimeSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RuntimeSecretSpec   `json:"spec"`
	Status RuntimeSecretStatus `json:"status,omitempty"`
}

// KubeconfigSecret returns the name and key of the runtime's kubeconfig Secret,
// with the defaults applied.
func (r *RuntimeSecret) KubeconfigSecret() (name, key string) {
	name, key = r.Spec.ForProvider.KubeconfigSecretRef.Name, r.Spec.ForProvider.KubeconfigSecretRef.Key
	if name == "" {
		name = DefaultKubeconfigPrefix + r.Spec.ForProvider.RuntimeID
	}
	if key == "" {
		key = DefaultKubeconfigKey
	}
	return name, key
}

// TargetSecret returns the namespace and name of the Secret on the runtime, with
// the defaults applied.
func (r *RuntimeSecret) TargetSecret() (namespace, name string) {
	namespace, name = r.Spec.ForProvider.Target.Namespace, r.Spec.ForProvider.Target.Name
	if namespace == "" {
		namespace = DefaultTargetNamespace
	}
	if name == "" {
		name = DefaultTargetName
	}
	return namespace, name
}

// +kubebuilder:object:root=true

// RuntimeSecretList contains a list of RuntimeSecret.
type RuntimeSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RuntimeSecret `json:"items"`
}
