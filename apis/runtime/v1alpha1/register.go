package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	Group   = "runtime.eventingauth.kyma-project.io"
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

// RuntimeSecret type metadata.
var (
	RuntimeSecretKind             = reflect.TypeOf(RuntimeSecret{}).Name()
	RuntimeSecretGroupKind        = schema.GroupKind{Group: Group, Kind: RuntimeSecretKind}.String()
	RuntimeSecretGroupVersionKind = SchemeGroupVersion.WithKind(RuntimeSecretKind)
)

func init() {
	SchemeBuilder.Register(&RuntimeSecret{}, &RuntimeSecretList{})
}
