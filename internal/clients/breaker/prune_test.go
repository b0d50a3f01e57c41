package breaker

import (
	"context"
	"errors"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestForgettable: a healthy runtime whose answer is no longer fresh is
// dropped after Fresh, so that runtimes polled minutes apart keep no circuits
// between polls; a failing one, one with a call or a first contact in flight,
// and, without Fresh, one whose credentials were accepted are kept longer.
func TestForgettable(t *testing.T) {
	const fresh, maxDelay = time.Second, time.Minute
	ok := func(context.Context) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}
	refused := func(context.Context) (*http.Response, error) { return nil, syscall.ECONNREFUSED }
	cases := map[string]struct {
		reason string
		fresh  time.Duration
		// prepare brings the target into its state; done releases what it holds.
		prepare func(*Set, *Target) (done func())
		idle    time.Duration
		want    bool
	}{
		"HealthyAnswerStale": {
			reason:  "A healthy target idle longer than Fresh is dropped: its next call is a first contact either way.",
			fresh:   fresh,
			prepare: func(_ *Set, t *Target) func() { _, _ = t.Do(context.Background(), Request{Do: ok}); return func() {} },
			idle:    2 * fresh,
			want:    true,
		},
		"HealthyWithinFresh": {
			reason:  "A healthy target used within Fresh is kept.",
			fresh:   fresh,
			prepare: func(_ *Set, t *Target) func() { _, _ = t.Do(context.Background(), Request{Do: ok}); return func() {} },
			idle:    fresh / 2,
		},
		"Failing": {
			reason: "A failing target is kept past Fresh: its circuit says when to try again.",
			fresh:  fresh,
			prepare: func(_ *Set, t *Target) func() {
				_, _ = t.Do(context.Background(), Request{Do: refused})
				return func() {}
			},
			idle: 2 * maxDelay,
		},
		"CallInFlight": {
			reason: "A target with a call in flight is kept, so that the call's outcome is not lost.",
			fresh:  fresh,
			prepare: func(s *Set, t *Target) func() {
				// Answered just now: the call in flight is no first contact.
				_, _ = t.Do(context.Background(), Request{Do: ok})
				release, started := make(chan struct{}), make(chan struct{})
				go func() {
					_, _ = s.Guard("k", "k")(context.Background(), Request{Do: func(context.Context) (*http.Response, error) {
						close(started)
						<-release
						return nil, errors.New("gone")
					}})
				}()
				<-started
				return func() { close(release) }
			},
			idle: 2 * maxDelay,
		},
		"NoFreshHealthy": {
			reason:  "Without Fresh a healthy target is kept two open periods: it knows its credentials were accepted.",
			prepare: func(_ *Set, t *Target) func() { _, _ = t.Do(context.Background(), Request{Do: ok}); return func() {} },
			idle:    2 * fresh,
		},
		"NoFreshHealthyLongIdle": {
			reason:  "Without Fresh a healthy target is dropped after two open periods.",
			prepare: func(_ *Set, t *Target) func() { _, _ = t.Do(context.Background(), Request{Do: ok}); return func() {} },
			idle:    2*maxDelay + time.Second,
			want:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := NewSet(Options{Kind: Runtime, BaseDelay: maxDelay, MaxDelay: maxDelay, Fresh: tc.fresh})
			target := s.Target("k", "k")
			done := tc.prepare(s, target)
			defer done()
			target.answered.Store(time.Now().Add(-tc.idle).UnixNano())
			if got := s.forgettable(target, tc.idle); got != tc.want {
				t.Errorf("%s\nforgettable after %s: %v, want %v", tc.reason, tc.idle, got, tc.want)
			}
		})
	}
}
