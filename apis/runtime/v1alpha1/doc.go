// Package v1alpha1 contains the RuntimeSecret managed resource: the Secret with an
// IAS application's credentials on a Kyma runtime.
// +kubebuilder:object:generate=true
// +groupName=runtime.eventingauth.kyma-project.io
// +versionName=v1alpha1
package v1alpha1
