package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper answers RESTMapping for the kinds it knows and counts the
// questions.
type countingMapper struct {
	meta.RESTMapper
	known map[schema.GroupKind]bool
	asked int
}

func (m *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.asked++
	if !m.known[gk] {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	gvk := gk.WithVersion(versions[0])
	return &meta.RESTMapping{GroupVersionKind: gvk, Scope: meta.RESTScopeNamespace}, nil
}

func TestBuiltinMappings(t *testing.T) {
	const changed = "changed by a caller"
	secret := schema.GroupKind{Kind: "Secret"}
	crd := schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	custom := schema.GroupKind{Group: "ias.eventingauth.kyma-project.io", Kind: "IASApplication"}
	cases := map[string]struct {
		reason    string
		gk        schema.GroupKind
		version   string
		known     bool
		wantAsked int
	}{
		"CoreKind":   {reason: "a core kind's mapping is looked up once", gk: secret, version: "v1", known: true, wantAsked: 1},
		"CRDs":       {reason: "CustomResourceDefinitions are served by every API server", gk: crd, version: "v1", known: true, wantAsked: 1},
		"CustomKind": {reason: "a kind a CRD adds may go with it: asked each time", gk: custom, version: "v1alpha1", known: true, wantAsked: 2},
		"NotServed":  {reason: "a failed lookup is not kept", gk: secret, version: "v1", wantAsked: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := &countingMapper{known: map[schema.GroupKind]bool{tc.gk: tc.known}}
			b := BuiltinMappings(m)
			for range 2 {
				got, err := b.RESTMapping(tc.gk, tc.version)
				if tc.known != (err == nil) {
					t.Fatalf("%s\nRESTMapping: %v", tc.reason, err)
				}
				if err != nil {
					if !meta.IsNoMatchError(err) {
						t.Fatalf("%s\nRESTMapping: %v, want a no-match error", tc.reason, err)
					}
					continue
				}
				if got.GroupVersionKind != tc.gk.WithVersion(tc.version) || got.Resource.Resource == changed {
					t.Errorf("%s\nRESTMapping: %+v", tc.reason, got)
				}
				got.Resource.Resource = changed
			}
			if m.asked != tc.wantAsked {
				t.Errorf("%s\nthe wrapped mapper was asked %d times, want %d", tc.reason, m.asked, tc.wantAsked)
			}
		})
	}
}
