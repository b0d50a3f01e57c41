package kube

import (
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// BuiltinMappings wraps m so that the mapping of a kind every API server
// serves (client-go's scheme, and CustomResourceDefinitions) is looked up once
// and then kept: those never change while the process runs. controller-runtime
// asks the mapper whether a kind is namespaced at every cache read of a kind
// the cache holds in chosen namespaces only (Secrets here), and its dynamic
// mapper answers by walking its mappings each time. Every other kind, which a
// CRD may add or take away, is asked of m each time.
func BuiltinMappings(m meta.RESTMapper) meta.RESTMapper {
	return &builtinMappings{RESTMapper: m}
}

type builtinMappings struct {
	meta.RESTMapper
	kept sync.Map // schema.GroupVersionKind → *meta.RESTMapping
}

// builtin tells whether every API server serves gvk.
func builtin(gvk schema.GroupVersionKind) bool {
	return gvk.GroupVersion() == apiextensionsv1.SchemeGroupVersion || clientgoscheme.Scheme.Recognizes(gvk)
}

func (b *builtinMappings) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 {
		return b.RESTMapper.RESTMapping(gk, versions...)
	}
	gvk := gk.WithVersion(versions[0])
	if m, ok := b.kept.Load(gvk); ok {
		mapping := *m.(*meta.RESTMapping) // a copy: callers may change what they get
		return &mapping, nil
	}
	if !builtin(gvk) {
		return b.RESTMapper.RESTMapping(gk, versions...)
	}
	m, err := b.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	kept := *m
	b.kept.Store(gvk, &kept)
	return m, nil
}
