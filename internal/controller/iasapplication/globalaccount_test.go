package iasapplication

import (
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
)

// TestAppGlobalAccount: a new app gets the ProviderConfig's globalAccount, as
// eventing-auth-manager sent one for every app; the Kyma CR's label only
// where the config asks for it; the resource's own always.
func TestAppGlobalAccount(t *testing.T) {
	cases := map[string]struct {
		reason   string
		own      string
		kyma     string
		fromKyma bool
		want     string
	}{
		"ConfigByDefault":    {reason: "The Kyma CR's label is not sent unless the config asks.", kyma: "ga-kyma", want: "ga-config"},
		"KymaWhenAsked":      {reason: "The config asks for the Kyma CR's label.", kyma: "ga-kyma", fromKyma: true, want: "ga-kyma"},
		"ConfigWithoutLabel": {reason: "Asked for, but the Kyma CR has no label: the config's.", fromKyma: true, want: "ga-config"},
		"OwnWins":            {reason: "The resource's own forProvider.globalAccount wins.", own: "ga-own", kyma: "ga-kyma", fromKyma: true, want: "ga-own"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.IASApplication{}
			cr.Spec.ForProvider.GlobalAccount = tc.own
			if tc.kyma != "" {
				meta.AddAnnotations(cr, map[string]string{apis.AnnotationKymaGlobalAccount: tc.kyma})
			}
			e := &external{globalAccount: "ga-config", globalAccountFromKyma: tc.fromKyma}
			if got := e.appGlobalAccount(cr); got != tc.want {
				t.Errorf("%s\nappGlobalAccount() = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}
