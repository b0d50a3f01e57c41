package iasapplication

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestCheckCertsURL: a certs URL that is not <issuer>/oauth2/certs is said in
// a condition and, once, in an event.
func TestCheckCertsURL(t *testing.T) {
	fits := ias.Endpoints{CertsURL: "https://t.accounts.ondemand.com/oauth2/certs", Issuer: "https://t.accounts.ondemand.com"}
	custom := ias.Endpoints{CertsURL: "https://t.accounts.ondemand.com/oauth2/certs", Issuer: "https://login.example.com"}
	cases := map[string]struct {
		observed []ias.Endpoints
		status   corev1.ConditionStatus
		events   int
	}{
		"fits":                         {[]ias.Endpoints{fits}, corev1.ConditionTrue, 0},
		"issuer with a trailing slash": {[]ias.Endpoints{{CertsURL: fits.CertsURL, Issuer: fits.Issuer + "/"}}, corev1.ConditionTrue, 0},
		"custom domain":                {[]ias.Endpoints{custom}, corev1.ConditionFalse, 1},
		"custom domain, seen twice":    {[]ias.Endpoints{custom, custom}, corev1.ConditionFalse, 1},
		"fixed":                        {[]ias.Endpoints{custom, fits}, corev1.ConditionTrue, 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			log := &fakes.Events{}
			e := &external{shared: shared{recorder: log}}
			cr := &v1alpha1.IASApplication{}
			for _, ep := range tc.observed {
				e.checkCertsURL(cr, ep)
			}
			if c := cr.GetCondition(TypeCertsURL); c.Status != tc.status {
				t.Errorf("condition %s %q, want %s", c.Status, c.Message, tc.status)
			}
			if len(log.Reasons()) != tc.events {
				t.Errorf("events %v, want %d", log.Reasons(), tc.events)
			}
		})
	}
}
