package reconciler

import (
	"errors"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/google/go-cmp/cmp"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

func TestWithoutDeletedEvents(t *testing.T) {
	cases := map[string]struct {
		reason string
		e      event.Event
		kept   bool
	}{
		"DeletionRequested": {
			reason: "the event of a requested deletion is an API write for an object on its way out, which nobody reads",
			e:      event.Normal(reasonDeletedExternal, "Successfully requested deletion of external resource"),
		},
		"DeletionFailed": {
			reason: "a failed deletion is what a person needs to see",
			e:      event.Warning("CannotDeleteExternalResource", errors.New("boom")), kept: true,
		},
		"Created": {
			reason: "other events pass",
			e:      event.Normal("CreatedExternalResource", "Successfully requested creation of external resource"), kept: true,
		},
		"SameReasonAsWarning": {
			reason: "a warning is never dropped, whatever its reason",
			e:      event.Event{Type: event.TypeWarning, Reason: reasonDeletedExternal, Message: "m"}, kept: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &fakes.Events{}
			WithoutDeletedEvents(r).WithAnnotations("k", "v").Event(nil, tc.e)
			var want []event.Event
			if tc.kept {
				want = []event.Event{tc.e}
			}
			if diff := cmp.Diff(want, r.All()); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
