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
		reason   string
		observed []ias.Endpoints
		status   corev1.ConditionStatus
		events   int
	}{
		"Fits": {
			reason:   "a certs URL on the token URL's host is what the eventing manager can check tokens with",
			observed: []ias.Endpoints{fits}, status: corev1.ConditionTrue,
		},
		"IssuerWithTrailingSlash": {
			reason:   "an issuer that differs by a trailing slash is the same issuer",
			observed: []ias.Endpoints{{CertsURL: fits.CertsURL, Issuer: fits.Issuer + "/"}}, status: corev1.ConditionTrue,
		},
		"CustomDomain": {
			reason:   "a tenant on a custom domain issues tokens the runtime's certs URL cannot check: told in a condition and an event",
			observed: []ias.Endpoints{custom}, status: corev1.ConditionFalse, events: 1,
		},
		"CustomDomainSeenTwice": {
			reason:   "the event is told once, not on every poll",
			observed: []ias.Endpoints{custom, custom}, status: corev1.ConditionFalse, events: 1,
		},
		"Fixed": {
			reason:   "the condition turns back once the tenant fits",
			observed: []ias.Endpoints{custom, fits}, status: corev1.ConditionTrue, events: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			log := &fakes.Events{}
			e := &external{recorder: log}
			cr := &v1alpha1.IASApplication{}
			for _, ep := range tc.observed {
				e.checkCertsURL(cr, ep)
			}
			if c := cr.GetCondition(TypeCertsURL); c.Status != tc.status {
				t.Errorf("%s\ncondition %s %q, want %s", tc.reason, c.Status, c.Message, tc.status)
			}
			if len(log.Reasons()) != tc.events {
				t.Errorf("%s\nevents %v, want %d", tc.reason, log.Reasons(), tc.events)
			}
		})
	}
}
