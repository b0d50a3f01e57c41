// Package v1alpha1 contains the IASApplication managed resource: an OIDC
// application in SAP Cloud Identity Services and its client secret.
// +kubebuilder:object:generate=true
// +groupName=ias.eventingauth.kyma-project.io
// +versionName=v1alpha1
package v1alpha1
