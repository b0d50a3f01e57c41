package runtimesecret

import (
	"errors"
	"fmt"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

// TestAnswerDue: only a Ready and Synced RuntimeSecret whose runtime has not
// answered a first call yet keeps its status; a new one, one that failed, and
// any other failure are told.
func TestAnswerDue(t *testing.T) {
	pending := fmt.Errorf("cannot read: %w", &breaker.Error{Kind: breaker.Runtime, Target: "rt", Pending: true})
	rs := func(conds ...xpv2.Condition) *v1alpha1.RuntimeSecret {
		r := &v1alpha1.RuntimeSecret{}
		r.SetConditions(conds...)
		return r
	}
	cases := map[string]struct {
		reason string
		cr     *v1alpha1.RuntimeSecret
		err    error
		want   bool
	}{
		"ReadyPending":        {reason: "a Ready runtime whose first call is out keeps its status", cr: rs(xpv2.Available(), xpv2.ReconcileSuccess()), err: pending, want: true},
		"NewPending":          {reason: "a runtime not yet Ready says what it waits for", cr: rs(xpv2.Creating(), xpv2.ReconcileSuccess()), err: pending},
		"FailedBeforePending": {reason: "a runtime whose last reconcile failed says so until it answers", cr: rs(xpv2.Available(), xpv2.ReconcileError(errors.New("boom"))), err: pending},
		"ReadyFailing": {reason: "a failure of a Ready runtime is told", cr: rs(xpv2.Available(), xpv2.ReconcileSuccess()),
			err: &breaker.Error{Kind: breaker.Runtime, Target: "rt", Cause: "timeout", FailedFast: true}},
		"ReadyOtherError": {reason: "any other error is told", cr: rs(xpv2.Available(), xpv2.ReconcileSuccess()), err: errors.New("boom")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := answerDue(tc.cr, tc.err); got != tc.want {
				t.Errorf("%s\nanswerDue: %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
