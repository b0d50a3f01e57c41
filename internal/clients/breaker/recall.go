package breaker

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/failsafe-go/failsafe-go"
)

// A Failure is what a resource's condition recorded of its target's last
// failure: the provider keeps no state outside the API server, so after a
// restart the conditions are what it knows of its targets.
type Failure struct {
	Target string
	Cause  string
	// Next is the next try the condition named.
	Next time.Time
}

// failureText finds, in a message an *Error wrote (possibly wrapped), the
// target, the cause and the next try of a failed or failing target.
var failureText = regexp.MustCompile(`(?:IAS tenant|runtime API server) (\S+) (?:failed|is failing) \(([^)]*)\);.*?next try at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)`)

// Recalled reads the failure an *Error's message (a Synced condition's)
// records. Messages of targets that answered (rejections, first calls not yet
// answered) and of failures with no next try are not failures to recall.
func Recalled(message string) (Failure, bool) {
	m := failureText.FindStringSubmatch(message)
	if m == nil {
		return Failure{}, false
	}
	next, err := time.Parse(time.RFC3339, m[3])
	if err != nil {
		return Failure{}, false
	}
	return Failure{Target: m[1], Cause: m[2], Next: next}, true
}

// Recall opens the circuit of the target under key as f recorded, until f's
// next try (spread by the circuit's jitter, so that a thousand circuits
// recalled at once do not all probe at once; at once if it is past), unless
// the Set knows the target already or f is of another target. Its first call
// after that is a probe, bounded with the calls to failing targets.
func (s *Set) Recall(key, name string, f Failure) {
	if f.Target != name {
		return
	}
	s.mu.Lock()
	if _, ok := s.targets[key]; ok {
		s.mu.Unlock()
		return
	}
	t := newTarget(s, name)
	s.targets[key] = t
	s.mu.Unlock()

	t.mu.Lock()
	t.cause = f.Cause
	t.mu.Unlock()
	// The failure is replayed through its circuit, which opens as it would
	// have (failsafe computes an opening's delay only for an execution).
	c, replay := t.availability[0], func() (*http.Response, error) { return nil, errRecalled } // no answer
	if strings.HasPrefix(f.Cause, "HTTP 5") {
		c, replay = t.availability[1], func() (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody}, nil
		}
	}
	c.recalled.Store(int64(max(time.Until(f.Next), 0)) + 1)
	for c.IsClosed() {
		_, _ = failsafe.With[*http.Response](c).Get(replay)
	}
}

var errRecalled = errors.New("recalled failure")
