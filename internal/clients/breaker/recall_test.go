package breaker

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRecalled reads failures back from messages as resources' conditions
// hold them: the breaker's own error, wrapped by a controller.
func TestRecalled(t *testing.T) {
	next := time.Date(2026, 11, 24, 10, 4, 5, 0, time.UTC)
	wrapped := func(e *Error) string {
		return fmt.Errorf("cannot get Secret kyma-system/eventing-webhook-auth: %w", e).Error()
	}
	rt := func(e Error) *Error { e.Kind, e.Target, e.Next = Runtime, "https://rt.example:443", next; return &e }
	cases := map[string]struct {
		reason  string
		message string
		want    Failure
		ok      bool
	}{
		"failed": {reason: "a Synced condition that tells of a runtime's failure gives the failure back", message: wrapped(rt(Error{Cause: "timeout"})),
			want: Failure{Target: "https://rt.example:443", Cause: "timeout", Next: next}, ok: true},
		"failing, failing fast": {reason: "so does one of a call that failed fast", message: wrapped(rt(Error{Cause: "connection refused", FailedFast: true})),
			want: Failure{Target: "https://rt.example:443", Cause: "connection refused", Next: next, FailedFast: true}, ok: true},
		"failing, no slot": {reason: "and one that found no slot", message: wrapped(rt(Error{Cause: "HTTP 503 Service Unavailable", FailedFast: true, Busy: true})),
			want: Failure{Target: "https://rt.example:443", Cause: "HTTP 503 Service Unavailable", Next: next, FailedFast: true, Busy: true}, ok: true},
		"a tenant": {reason: "and a tenant's", message: (&Error{Kind: Tenant, Target: "https://t.example", Cause: "timeout", Next: next}).Error(),
			want: Failure{Target: "https://t.example", Cause: "timeout", Next: next}, ok: true},
		"a deletion note after it": {reason: "a note after the failure does not hide it", message: wrapped(rt(Error{Cause: "timeout"})) + "; the deletion completes without the runtime at 2026-11-24T11:00:00Z",
			want: Failure{Target: "https://rt.example:443", Cause: "timeout", Next: next}, ok: true},
		"no next try: the circuit stayed closed": {reason: "a failure without a next try opened no circuit", message: (&Error{Kind: Runtime, Target: "x", Cause: "HTTP 502 Bad Gateway"}).Error()},
		"first call not answered yet":            {reason: "a first call still waiting is no failure", message: wrapped(rt(Error{Pending: true, FailedFast: true}))},
		"credentials rejected":                   {reason: "rejected credentials are recalled from the credentials' record, not from here", message: wrapped(rt(Error{Cause: "HTTP 401 Unauthorized", Rejected: true}))},
		"another error":                          {reason: "another error tells of no target", message: "cannot read the kubeconfig Secret kcp-system/kubeconfig-x: not found"},
		"no condition":                           {reason: "no condition, no failure"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Recalled(tc.message)
			if ok != tc.ok {
				t.Fatalf("%s\nRecalled(%q) ok = %v, want %v", tc.reason, tc.message, ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRecalled(%q): -want +got:\n%s", tc.reason, tc.message, diff)
			}
		})
	}
}

// TestRecall: a target recalled as failing is not called until the recalled
// next try (within the circuit's jitter), names the recalled cause meanwhile,
// and is probed after it; a target the Set knows, or a failure of another
// target, is left alone.
func TestRecall(t *testing.T) {
	const name = "https://rt.example:443"
	cases := map[string]struct {
		reason   string
		recall   Failure
		known    bool // the Set called the target before the recall
		waitCall time.Duration
		wantCall bool
	}{
		"until its next try":     {reason: "a failure recalled after a restart keeps the circuit open until its next try", recall: Failure{Target: name, Cause: "timeout", Next: time.Now().Add(time.Hour)}},
		"a 5xx too":              {reason: "a 5xx answer is a failure like a timeout", recall: Failure{Target: name, Cause: "HTTP 503 Service Unavailable", Next: time.Now().Add(time.Hour)}},
		"probed after it":        {reason: "the next try probes the target", recall: Failure{Target: name, Cause: "timeout", Next: time.Now().Add(200 * time.Millisecond)}, waitCall: 300 * time.Millisecond, wantCall: true},
		"a next try long gone":   {reason: "a failure whose next try has passed opens nothing", recall: Failure{Target: name, Cause: "timeout", Next: time.Now().Add(-time.Hour)}, wantCall: true},
		"another target":         {reason: "a recall opens only its target's circuit", recall: Failure{Target: "https://other.example", Cause: "timeout", Next: time.Now().Add(time.Hour)}, wantCall: true},
		"a target the Set knows": {reason: "a target called since the start knows better than the record", recall: Failure{Target: name, Cause: "timeout", Next: time.Now().Add(time.Hour)}, known: true, wantCall: true},
	}
	for tn, tc := range cases {
		t.Run(tn, func(t *testing.T) {
			t.Parallel()
			set := firstContactSet(time.Minute)
			if tc.known {
				resp, err := set.Target("k", name).Do(context.Background(), read(answer(200)))
				if err != nil {
					t.Fatalf("%s\n%v", tc.reason, err)
				}
				_ = resp.Body.Close()
			}
			set.Recall(context.Background(), "k", name, tc.recall)
			time.Sleep(tc.waitCall)
			called := false
			resp, err := set.Target("k", name).Do(context.Background(), read(func() (*http.Response, error) { called = true; return answer(200)() }))
			if called != tc.wantCall {
				t.Fatalf("%s\ncalled %v, want %v (%v)", tc.reason, called, tc.wantCall, err)
			}
			if called {
				_ = resp.Body.Close()
				return
			}
			// Word for word what the condition holds: a restart writes no status.
			want := &Error{Kind: Runtime, Target: name, Cause: tc.recall.Cause, FailedFast: tc.recall.FailedFast, Busy: tc.recall.Busy, Next: tc.recall.Next}
			if err == nil || err.Error() != want.Error() {
				t.Fatalf("%s\ngot %v, want %v", tc.reason, err, want)
			}
		})
	}
}

// TestOpenings: a recalled failure's circuit goes on doubling from the open
// period its condition shows (next try minus when it was written).
func TestOpenings(t *testing.T) {
	set := NewSet(Options{Kind: Runtime, BaseDelay: 5 * time.Second, MaxDelay: 5 * time.Minute})
	for period, want := range map[time.Duration]int32{
		0: 1, 5 * time.Second: 1, 6 * time.Second: 2, 40 * time.Second: 4, 4 * time.Minute: 7, time.Hour: 7,
	} {
		if got := set.openings(period); got != want {
			t.Errorf("openings(%s) = %d, want %d", period, got, want)
		}
	}
}
