// Package v1alpha1 contains the provider's configuration kinds: ProviderConfig,
// ClusterProviderConfig and their usages.
// +kubebuilder:object:generate=true
// +groupName=eventingauth.kyma-project.io
// +versionName=v1alpha1
package v1alpha1
