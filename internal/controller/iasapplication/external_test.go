package iasapplication

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		cr   *v1alpha1.IASApplication
		in   ias.Application
		want []ias.Patch
	}{
		"in line": {app("rt", v1alpha1.IASApplicationParameters{}),
			ias.Application{Name: "rt", DisplayName: "rt", Description: ownedDescription("ns/rt"), SSOType: ias.SSOTypeOIDC}, nil},
		"display name defaults to name": {app("rt", v1alpha1.IASApplicationParameters{}),
			ias.Application{Name: "rt", DisplayName: "other", Description: ownedDescription("ns/rt"), SSOType: ias.SSOTypeOIDC},
			[]ias.Patch{{Path: ias.PathDisplayName, Value: "rt"}}},
		"an adopted app gets its owner recorded": {app("rt", v1alpha1.IASApplicationParameters{}),
			ias.Application{Name: "rt", DisplayName: "rt", Description: "made by eventing-auth-manager", SSOType: ias.SSOTypeOIDC},
			[]ias.Patch{{Path: ias.PathDescription, Value: ownedDescription("ns/rt")}}},
		"an app of this provider that names no owner gets it": {app("rt", v1alpha1.IASApplicationParameters{}),
			ias.Application{Name: "rt", DisplayName: "rt", Description: ias.AppMarker, SSOType: ias.SSOTypeOIDC},
			[]ias.Patch{{Path: ias.PathDescription, Value: ownedDescription("ns/rt")}}},
		"handed over: the target is recorded": {withAnnotation(app("rt", v1alpha1.IASApplicationParameters{}), AnnotationHandOverTo, "other/rt"),
			ias.Application{Name: "rt", DisplayName: "rt", Description: ownedDescription("ns/rt"), SSOType: ias.SSOTypeOIDC},
			[]ias.Patch{{Path: ias.PathDescription, Value: ownedDescription("other/rt")}}},
		"everything drifted": {app("cr", v1alpha1.IASApplicationParameters{Name: "rt", DisplayName: "Runtime"}),
			ias.Application{Name: "renamed", DisplayName: "x", SSOType: "saml2"},
			[]ias.Patch{{Path: ias.PathName, Value: "rt"}, {Path: ias.PathDisplayName, Value: "Runtime"},
				{Path: ias.PathDescription, Value: ownedDescription("ns/cr")}, {Path: ias.PathSSOType, Value: ias.SSOTypeOIDC}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, drift(tc.cr, &tc.in)); diff != "" {
				t.Errorf("drift(): -want +got:\n%s", diff)
			}
		})
	}
}
