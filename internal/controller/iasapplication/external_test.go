package iasapplication

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

func app(name string, p v1alpha1.IASApplicationParameters) *v1alpha1.IASApplication {
	return &v1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.IASApplicationSpec{ForProvider: p}}
}

func TestDrift(t *testing.T) {
	cases := map[string]struct {
		cr   *v1alpha1.IASApplication
		in   ias.Application
		want []ias.Patch
	}{
		"in line": {app("rt", v1alpha1.IASApplicationParameters{}),
			ias.Application{Name: "rt", DisplayName: "rt", SSOType: ias.SSOTypeOIDC}, nil},
		"display name defaults to name": {app("rt", v1alpha1.IASApplicationParameters{}),
			ias.Application{Name: "rt", DisplayName: "other", SSOType: ias.SSOTypeOIDC},
			[]ias.Patch{{Path: ias.PathDisplayName, Value: "rt"}}},
		"everything drifted": {app("cr", v1alpha1.IASApplicationParameters{Name: "rt", DisplayName: "Runtime"}),
			ias.Application{Name: "renamed", DisplayName: "x", SSOType: "saml2"},
			[]ias.Patch{{Path: ias.PathName, Value: "rt"}, {Path: ias.PathDisplayName, Value: "Runtime"}, {Path: ias.PathSSOType, Value: ias.SSOTypeOIDC}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, drift(tc.cr, &tc.in)); diff != "" {
				t.Errorf("drift(): -want +got:\n%s", diff)
			}
		})
	}
}

func TestStale(t *testing.T) {
	cr := app("rt", v1alpha1.IASApplicationParameters{Secret: v1alpha1.APISecretParameters{Description: "eventing-auth"}})
	secrets := []ias.APISecret{
		{ID: "a", Description: "eventing-auth"},
		{ID: "b", Description: "eventing-auth"},
		{ID: "c", Description: "made by hand"},
	}
	ids := func(s []ias.APISecret) []string {
		var out []string
		for _, x := range s {
			out = append(out, x.ID)
		}
		return out
	}
	if diff := cmp.Diff([]string{"a"}, ids(stale(cr, secrets, &secrets[1]))); diff != "" {
		t.Errorf("with b published: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, ids(stale(cr, secrets, nil))); diff != "" {
		t.Errorf("with a newer one published: -want +got:\n%s", diff)
	}
}
