package iasapplication

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

func app(name string, p v1alpha1.IASApplicationParameters) *v1alpha1.IASApplication {
	return &v1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: v1alpha1.IASApplicationSpec{ForProvider: p}}
}

func withAnnotation(cr *v1alpha1.IASApplication, k, v string) *v1alpha1.IASApplication {
	cr.SetAnnotations(map[string]string{k: v})
	return cr
}

func TestDrift(t *testing.T) {
	cases := map[string]struct {
		reason string
		cr     *v1alpha1.IASApplication
		in     ias.Application
		want   []ias.Patch
	}{
		"InLine": {
			reason: "an app as the spec says needs no patch",
			cr:     app("rt", v1alpha1.IASApplicationParameters{}),
			in:     ias.Application{Name: "rt", DisplayName: "rt", Description: ownedDescription("ns/rt"), SSOType: ias.SSOTypeOIDC},
		},
		"DisplayNameDefaultsToName": {
			reason: "an unset display name means the name",
			cr:     app("rt", v1alpha1.IASApplicationParameters{}),
			in:     ias.Application{Name: "rt", DisplayName: "other", Description: ownedDescription("ns/rt"), SSOType: ias.SSOTypeOIDC},
			want:   []ias.Patch{{Path: ias.PathDisplayName, Value: "rt"}},
		},
		"AdoptedAppGetsOwner": {
			reason: "an app taken over (from eventing-auth-manager, say) records its owner, so that no other resource can take it",
			cr:     app("rt", v1alpha1.IASApplicationParameters{}),
			in:     ias.Application{Name: "rt", DisplayName: "rt", Description: "made by eventing-auth-manager", SSOType: ias.SSOTypeOIDC},
			want:   []ias.Patch{{Path: ias.PathDescription, Value: ownedDescription("ns/rt")}},
		},
		"MarkerWithoutOwner": {
			reason: "an app of this provider that names no owner (made before owners were recorded) gets it",
			cr:     app("rt", v1alpha1.IASApplicationParameters{}),
			in:     ias.Application{Name: "rt", DisplayName: "rt", Description: ias.AppMarker, SSOType: ias.SSOTypeOIDC},
			want:   []ias.Patch{{Path: ias.PathDescription, Value: ownedDescription("ns/rt")}},
		},
		"HandedOver": {
			reason: "a hand-over records the target as the owner",
			cr:     withAnnotation(app("rt", v1alpha1.IASApplicationParameters{}), apis.AnnotationHandOverTo, "other/rt"),
			in:     ias.Application{Name: "rt", DisplayName: "rt", Description: ownedDescription("ns/rt"), SSOType: ias.SSOTypeOIDC},
			want:   []ias.Patch{{Path: ias.PathDescription, Value: ownedDescription("other/rt")}},
		},
		"EverythingDrifted": {
			reason: "each drifted field is one patch",
			cr:     app("cr", v1alpha1.IASApplicationParameters{Name: "rt", DisplayName: "Runtime"}),
			in:     ias.Application{Name: "renamed", DisplayName: "x", SSOType: "saml2"},
			want: []ias.Patch{{Path: ias.PathName, Value: "rt"}, {Path: ias.PathDisplayName, Value: "Runtime"},
				{Path: ias.PathDescription, Value: ownedDescription("ns/cr")}, {Path: ias.PathSSOType, Value: ias.SSOTypeOIDC}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, drift(tc.cr, &tc.in)); diff != "" {
				t.Errorf("%s\ndrift(): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
