package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TenantSettings are the settings of an IAS tenant shared by both config kinds.
type TenantSettings struct {
	// GlobalAccount is sent as "globalAccount" when creating applications, unless
	// an IASApplication sets its own.
	// +optional
	GlobalAccount string `json:"globalAccount,omitempty"`

	// GlobalAccountFromKymaLabel sends, for an application made from a Kyma
	// CR, that CR's kyma-project.io/global-account-id label as its
	// globalAccount where it has one, instead of GlobalAccount. Off by
	// default: every application gets GlobalAccount, as eventing-auth-manager
	// sent its --ias-global-account-id for all. An IASApplication's own
	// forProvider.globalAccount wins either way.
	// +optional
	GlobalAccountFromKymaLabel bool `json:"globalAccountFromKymaLabel,omitempty"`

	// RateLimit bounds the requests this provider sends to the tenant for the
	// managed resources using this config, shared by all of them. It applies
	// within the provider's budget of the tenant URL (--ias-tenant-qps), which
	// all configs naming the URL share: IAS allows 50 requests per second per
	// originating IP.
	// +optional
	// +kubebuilder:default={qps: 40, burst: 10}
	RateLimit *RateLimit `json:"rateLimit,omitempty"`

	// SecretRotation rotates the client secrets of every IASApplication using
	// this config that sets no forProvider.secret.validFor of its own: those
	// made from Kyma CRs among them. Unset: secrets never expire.
	// +optional
	SecretRotation *SecretRotation `json:"secretRotation,omitempty"`
}

// SecretRotation is how long a new client secret is valid and how long before
// its expiry its successor is made and published. A rotation keeps the
// application and its client ID; the older secret stays valid in IAS until
// every runtime carries the new one and the application's retireAfter passed.
// +kubebuilder:validation:XValidation:rule="duration(self.rotateBefore) < duration(self.validFor)",message="rotateBefore must be shorter than validFor"
type SecretRotation struct {
	// ValidFor is how long a new secret is valid, e.g. "2160h".
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	ValidFor metav1.Duration `json:"validFor"`

	// RotateBefore is how long before its expiry a secret is replaced, e.g.
	// "720h". It leaves the older secret's retirement (retireAfter, 15m by
	// default, after every runtime carries the new one) time before it expires.
	// A secret that never expires (made before this was set, or inherited from
	// eventing-auth-manager) is replaced validFor - rotateBefore after it was
	// first published.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	RotateBefore metav1.Duration `json:"rotateBefore"`
}

// RateLimit is a token bucket.
type RateLimit struct {
	// QPS is the sustained number of requests per second.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=40
	QPS int32 `json:"qps,omitempty"`

	// Burst is the number of requests that may be sent at once.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=10
	Burst int32 `json:"burst,omitempty"`
}

// LocalCredentials locate the Secret, in the ProviderConfig's namespace, that holds
// the keys username, password and url (https://<tenant>.accounts.ondemand.com).
type LocalCredentials struct {
	// Source of the credentials.
	// +kubebuilder:validation:Enum=Secret
	// +kubebuilder:default=Secret
	Source xpv2.CredentialsSource `json:"source"`

	// SecretRef names the Secret.
	SecretRef xpv2.LocalSecretReference `json:"secretRef"`
}

// ClusterCredentials locate the Secret that holds the keys username, password and
// url (https://<tenant>.accounts.ondemand.com).
type ClusterCredentials struct {
	// Source of the credentials.
	// +kubebuilder:validation:Enum=Secret
	// +kubebuilder:default=Secret
	Source xpv2.CredentialsSource `json:"source"`

	// SecretRef names the Secret and its namespace.
	SecretRef xpv2.SecretReference `json:"secretRef"`
}

// A ProviderConfigSpec configures access to an IAS tenant.
type ProviderConfigSpec struct {
	// Credentials to reach the tenant.
	Credentials LocalCredentials `json:"credentials"`

	// CABundleSecretRef selects an extra PEM CA bundle, in the ProviderConfig's
	// namespace, trusted for the tenant URL. TLS is always verified.
	// +optional
	CABundleSecretRef *xpv2.LocalSecretKeySelector `json:"caBundleSecretRef,omitempty"`

	TenantSettings `json:",inline"`
}

// A ClusterProviderConfigSpec configures access to an IAS tenant.
type ClusterProviderConfigSpec struct {
	// Credentials to reach the tenant.
	Credentials ClusterCredentials `json:"credentials"`

	// CABundleSecretRef selects an extra PEM CA bundle trusted for the tenant URL.
	// TLS is always verified.
	// +optional
	CABundleSecretRef *xpv2.SecretKeySelector `json:"caBundleSecretRef,omitempty"`

	// Namespaces are the namespaces whose managed resources may use this config,
	// besides those NamespaceSelector selects. With neither set, only the
	// namespace of the Kyma CRs (the provider's --kyma-namespace) may: the
	// platform's credentials reach no other namespace unless it says so.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`

	// NamespaceSelector selects, by their labels, further namespaces whose
	// managed resources may use this config.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	TenantSettings `json:",inline"`
}

// A ProviderConfigStatus is the observed state of a provider config.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// +kubebuilder:object:root=true

// A ProviderConfig configures how managed resources in its namespace reach an IAS
// tenant.
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="SECRET-NAME",type="string",JSONPath=".spec.credentials.secretRef.name",priority=1
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,eventing-auth}
// +kubebuilder:subresource:status
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ProviderConfigList contains a list of ProviderConfig.
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfig `json:"items"`
}

// +kubebuilder:object:root=true

// A ClusterProviderConfig configures how managed resources in any namespace reach
// an IAS tenant. Managed resources use the one named "default" unless they say
// otherwise.
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="SECRET-NAME",type="string",JSONPath=".spec.credentials.secretRef.name",priority=1
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,eventing-auth}
// +kubebuilder:subresource:status
type ClusterProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterProviderConfigSpec `json:"spec"`
	Status ProviderConfigStatus      `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterProviderConfigList contains a list of ClusterProviderConfig.
type ClusterProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfig `json:"items"`
}
