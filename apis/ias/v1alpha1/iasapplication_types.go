package v1alpha1

import (
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultSecretDescription marks the api secrets this provider creates; only secrets
// carrying it are ever deleted by the provider.
const DefaultSecretDescription = "eventing-auth"

// Keys of the connection Secret; a RuntimeSecret copies the same keys to the runtime.
const (
	KeyClientID     = "client_id"
	KeyClientSecret = "client_secret"
	KeyTokenURL     = "token_url"
	KeyCertsURL     = "certs_url"
)

// ConnectionKeys are all keys of the connection Secret.
var ConnectionKeys = []string{KeyClientID, KeyClientSecret, KeyTokenURL, KeyCertsURL}

// IASApplicationParameters are the configurable fields of an IASApplication.
// +kubebuilder:validation:XValidation:rule="has(self.name) == has(oldSelf.name) && (!has(self.name) || self.name == oldSelf.name)",message="name is immutable"
type IASApplicationParameters struct {
	// Name of the application in IAS, usually the runtime ID. Defaults to the
	// resource's metadata.name. Immutable. IAS looks applications up by a
	// filter that takes the name unquoted, so it holds only letters, digits,
	// '.', '_', ':' and '-'.
	// +optional
	// +kubebuilder:validation:MaxLength=247
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._:-]*$`
	Name string `json:"name,omitempty"`

	// DisplayName shown in IAS. Defaults to the name.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	DisplayName string `json:"displayName,omitempty"`

	// GlobalAccount overrides the ProviderConfig's globalAccount.
	// +optional
	GlobalAccount string `json:"globalAccount,omitempty"`

	// Secret configures the api (client) secret.
	// +optional
	// +kubebuilder:default={}
	Secret APISecretParameters `json:"secret,omitempty"`
}

// APISecretParameters configure the client secret the provider creates.
// +kubebuilder:validation:XValidation:rule="!has(self.rotateBefore) || (has(self.validFor) && duration(self.rotateBefore) < duration(self.validFor))",message="rotateBefore needs validFor and must be shorter than it"
type APISecretParameters struct {
	// Description marks the secrets this provider creates. Older secrets with this
	// description are deleted when a new one replaces them; others are never touched.
	// +optional
	// +kubebuilder:default=eventing-auth
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Description string `json:"description,omitempty"`

	// AuthorizationScopes granted to the secret.
	// +optional
	// +kubebuilder:default={oAuth}
	AuthorizationScopes []string `json:"authorizationScopes,omitempty"`

	// ValidFor is how long a new secret is valid, e.g. "2160h". Empty: no expiry.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	ValidFor *metav1.Duration `json:"validFor,omitempty"`

	// RotateBefore replaces the secret this long before it expires. Needs validFor.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	RotateBefore *metav1.Duration `json:"rotateBefore,omitempty"`

	// RetireAfter is how long an older secret of this provider stays valid in IAS
	// after its successor was published and every RuntimeSecret using this
	// application carries the successor on its runtime. The eventing manager on a
	// runtime re-reads its Secret about every 10 minutes, and a runtime still using
	// a deleted secret locks its client ID out for an hour.
	// +optional
	// +kubebuilder:default="15m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	RetireAfter *metav1.Duration `json:"retireAfter,omitempty"`
}

// DefaultRetireAfter is the grace period of an older secret when retireAfter is unset.
const DefaultRetireAfter = 15 * time.Minute

// RetiringSecret is an older client secret of this provider, kept in IAS until
// the runtimes have taken up its successor.
type RetiringSecret struct {
	// ID of the api secret in IAS.
	ID string `json:"id"`

	// Hint is the first characters IAS shows for it.
	Hint string `json:"hint,omitempty"`

	// DeleteAfter is the earliest time it is deleted; it is deleted then only once
	// every RuntimeSecret using the application carries the current secret.
	DeleteAfter metav1.Time `json:"deleteAfter"`

	// WaitingFor says what holds the deletion back, if anything but time.
	// +optional
	WaitingFor string `json:"waitingFor,omitempty"`
}

// IASApplicationObservation is the observed state of the application in IAS.
// It never holds the client secret.
type IASApplicationObservation struct {
	// ID is the application's UUID in IAS (also the external name).
	ID string `json:"id,omitempty"`

	// ClientID of the application.
	ClientID string `json:"clientId,omitempty"`

	// TokenURL is the tenant's OAuth token endpoint.
	TokenURL string `json:"tokenURL,omitempty"`

	// CertsURL is the tenant's JWKS endpoint.
	CertsURL string `json:"certsURL,omitempty"`

	// SecretID of the api secret published in the connection Secret.
	SecretID string `json:"secretId,omitempty"`

	// SecretHint is the first characters IAS shows for that secret.
	SecretHint string `json:"secretHint,omitempty"`

	// SecretValidTo is when that secret expires; empty if never.
	SecretValidTo *metav1.Time `json:"secretValidTo,omitempty"`

	// SecretRotatesAt is when that secret is replaced: rotateBefore before it
	// expires, from this resource's secret settings or else its
	// ProviderConfig's secretRotation. Empty: never.
	SecretRotatesAt *metav1.Time `json:"secretRotatesAt,omitempty"`

	// SecretPublishedAt is when that secret was first seen published; older
	// secrets are retired counting from it.
	SecretPublishedAt *metav1.Time `json:"secretPublishedAt,omitempty"`

	// SecretsCheckedAt is when the app's api secrets were last listed in IAS.
	// Between listings the published secret is taken as this status records it.
	SecretsCheckedAt *metav1.Time `json:"secretsCheckedAt,omitempty"`

	// Retiring lists the older secrets of this provider still valid in IAS.
	// +optional
	Retiring []RetiringSecret `json:"retiring,omitempty"`
}

// An IASApplicationSpec defines the desired state of an IASApplication.
type IASApplicationSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	// +kubebuilder:default={}
	ForProvider IASApplicationParameters `json:"forProvider"`
}

// An IASApplicationStatus represents the observed state of an IASApplication.
type IASApplicationStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 IASApplicationObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// An IASApplication is an OIDC application in SAP Cloud Identity Services with a
// client secret, published as the connection keys client_id, client_secret,
// token_url and certs_url.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="SECRET-VALID-TO",type="string",JSONPath=".status.atProvider.secretValidTo"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,eventing-auth}
type IASApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   IASApplicationSpec   `json:"spec"`
	Status IASApplicationStatus `json:"status,omitempty"`
}

// AppName is the application's name in IAS: spec.forProvider.name, or the
// resource's own name.
func (a *IASApplication) AppName() string {
	if a.Spec.ForProvider.Name != "" {
		return a.Spec.ForProvider.Name
	}
	return a.GetName()
}

// AppDisplayName is the display name the application should have in IAS.
func (a *IASApplication) AppDisplayName() string {
	if a.Spec.ForProvider.DisplayName != "" {
		return a.Spec.ForProvider.DisplayName
	}
	return a.AppName()
}

// +kubebuilder:object:root=true

// IASApplicationList contains a list of IASApplication.
type IASApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IASApplication `json:"items"`
}
