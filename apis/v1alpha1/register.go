package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	Group   = "eventingauth.kyma-project.io"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is group version used to register these objects.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder is used to add go types to the GroupVersionKind scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds the types of this group to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func gvk(o any) schema.GroupVersionKind {
	return SchemeGroupVersion.WithKind(reflect.TypeOf(o).Name())
}

// Kind metadata of the configuration kinds.
var (
	ProviderConfigGroupVersionKind                 = gvk(ProviderConfig{})
	ProviderConfigKind                             = ProviderConfigGroupVersionKind.Kind
	ProviderConfigUsageGroupVersionKind            = gvk(ProviderConfigUsage{})
	ProviderConfigUsageListGroupVersionKind        = gvk(ProviderConfigUsageList{})
	ClusterProviderConfigGroupVersionKind          = gvk(ClusterProviderConfig{})
	ClusterProviderConfigKind                      = ClusterProviderConfigGroupVersionKind.Kind
	ClusterProviderConfigUsageGroupVersionKind     = gvk(ClusterProviderConfigUsage{})
	ClusterProviderConfigUsageListGroupVersionKind = gvk(ClusterProviderConfigUsageList{})
)

func init() {
	SchemeBuilder.Register(&ProviderConfig{}, &ProviderConfigList{})
	SchemeBuilder.Register(&ClusterProviderConfig{}, &ClusterProviderConfigList{})
	SchemeBuilder.Register(&ProviderConfigUsage{}, &ProviderConfigUsageList{})
	SchemeBuilder.Register(&ClusterProviderConfigUsage{}, &ClusterProviderConfigUsageList{})
}
