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
		e    event.Event
		kept bool
	}{
		"deletion requested: dropped":    {event.Normal(reasonDeletedExternal, "Successfully requested deletion of external resource"), false},
		"deletion failed: kept":          {event.Warning("CannotDeleteExternalResource", errors.New("boom")), true},
		"created: kept":                  {event.Normal("CreatedExternalResource", "Successfully requested creation of external resource"), true},
		"same reason as a warning: kept": {event.Event{Type: event.TypeWarning, Reason: reasonDeletedExternal, Message: "m"}, true},
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
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}
