package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	Group   = "ias.eventingauth.kyma-project.io"
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

// IASApplication type metadata.
var (
	IASApplicationKind             = reflect.TypeOf(IASApplication{}).Name()
	IASApplicationGroupKind        = schema.GroupKind{Group: Group, Kind: IASApplicationKind}.String()
	IASApplicationGroupVersionKind = SchemeGroupVersion.WithKind(IASApplicationKind)
)

func init() {
	SchemeBuilder.Register(&IASApplication{}, &IASApplicationList{})
}
