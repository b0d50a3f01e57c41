package breaker

import (
	"context"
	"regexp"
	"time"
)

// A Failure is what a resource's condition recorded of its target's last
// failure: the provider keeps no state outside the API server, so after a
// restart the conditions are what it knows of its targets.
type Failure struct {
	Target string
	Cause  string
	// Next is the next try the condition named; At, if known, is when the
	// condition was written: Next - At is the open period the circuit had.
	Next, At time.Time
	// FailedFast and Busy are the recorded error's, so that a refusal until
	// Next says what the condition says, word for word: a restart then
	// writes no status.
	FailedFast, Busy bool
}

// failureText finds, in a message an *Error wrote (possibly wrapped), the
// target, the form, the cause and the next try of a failed or failing target.
var failureText = regexp.MustCompile(`(?:IAS tenant|runtime API server) (\S+) (failed|is failing) \(([^)]*)\); (not tried now, since)?.*?next try at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)`)

// Recalled reads the failure an *Error's message (a Synced condition's)
// records. Messages of targets that answered (rejections, first calls not yet
// answered) and of failures with no next try are not failures to recall.
func Recalled(message string) (Failure, bool) {
	m := failureText.FindStringSubmatch(message)
	if m == nil {
		return Failure{}, false
	}
	next, err := time.Parse(time.RFC3339, m[5])
	if err != nil {
		return Failure{}, false
	}
	return Failure{Target: m[1], Cause: m[3], Next: next, FailedFast: m[2] == "is failing", Busy: m[4] != ""}, true
}

// Recall takes f as what the Set knows of the target under key, unless it
// knows the target already or f is of another target: until f's next try a
// call is refused with f's own words; after it, the first call is a probe,
// bounded with the calls to failing targets, whose outcome the circuits take
// over.
func (s *Set) Recall(ctx context.Context, key, name string, f Failure) {
	if f.Target != name {
		return
	}
	t, created, err := s.target(key, name, s.scopedCall(ctx))
	if err != nil || !created {
		return
	}
	t.mu.Lock()
	t.cause, t.recalled = f.Cause, &f
	t.mu.Unlock()
	// A failing target's open periods keep doubling from the one it had.
	period := s.opts.BaseDelay
	if !f.At.IsZero() {
		period = f.Next.Sub(f.At)
	}
	n := s.openings(period)
	for _, c := range t.availability {
		c.opens.Store(n)
	}
	t.opened()
}

// openings is how many openings in a row lead to an open period of d.
func (s *Set) openings(d time.Duration) int32 {
	n := int32(1)
	for p := s.opts.BaseDelay; p < d && p < s.opts.MaxDelay; p *= 2 {
		n++
	}
	return n
}

// recalledFailure is the recalled failure the target still stands by, if any.
func (t *Target) recalledFailure() *Failure {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.recalled
}

// refuseRecalled refuses a call before the recalled next try, as the
// condition recorded it.
func (t *Target) refuseRecalled(ctx context.Context, f *Failure) error {
	t.set.opts.Metrics.refused.WithLabelValues(string(t.set.opts.Kind)).Inc()
	e := &Error{Kind: t.set.opts.Kind, Target: t.name, Cause: f.Cause, FailedFast: f.FailedFast, Busy: f.Busy, Next: f.Next}
	t.hint(ctx, e)
	t.rememberFailure(e)
	return e
}

// forget drops the recalled failure once a call's outcome is known: the
// circuits hold the truth from then on.
func (t *Target) forget() {
	t.mu.Lock()
	had := t.recalled != nil
	t.recalled = nil
	t.mu.Unlock()
	if had {
		t.closed()
	}
}
