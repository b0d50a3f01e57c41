package breaker

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func answer(code int) func() (*http.Response, error) {
	return func() (*http.Response, error) {
		return &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader(""))}, nil
	}
}

func fail(err error) func() (*http.Response, error) {
	return func() (*http.Response, error) { return nil, err }
}

func testSet() *Set {
	return NewSet(Options{Kind: Runtime, BaseDelay: 50 * time.Millisecond, MaxDelay: 200 * time.Millisecond, BrokenCalls: 1,
		Rejected: func(r *http.Response) bool { return r.StatusCode == http.StatusUnauthorized }, RejectedDelay: time.Hour})
}

// TestCall walks a target through a sequence of outcomes and checks what each
// call returns: its answer, a failure naming the cause, or a fast refusal.
func TestCall(t *testing.T) {
	type step struct {
		wait   time.Duration
		fn     func() (*http.Response, error)
		called bool   // fn ran
		want   string // "" for an answer, else text of the error
	}
	refused := fail(errors.New("must not be called"))
	cases := map[string][]step{
		"a good answer passes": {
			{fn: answer(200), called: true},
			{fn: answer(404), called: true},
		},
		"a 429 or 4xx shows the target working": {
			{fn: answer(429), called: true},
			{fn: answer(200), called: true},
		},
		"a refused connection opens the circuit at once": {
			{fn: fail(syscall.ECONNREFUSED), called: true, want: "failed (connection refused); next try at"},
			{fn: refused, want: "is failing (connection refused); calls fail fast until the next try at"},
		},
		"after the delay one probe goes out and a success closes": {
			{fn: answer(503), called: true, want: "failed (HTTP 503 Service Unavailable)"},
			{wait: 60 * time.Millisecond, fn: answer(200), called: true},
			{fn: answer(200), called: true},
		},
		"a timeout opens, a failed probe opens again for longer": {
			{fn: fail(context.DeadlineExceeded), called: true, want: "failed (timeout)"},
			{wait: 60 * time.Millisecond, fn: fail(context.DeadlineExceeded), called: true, want: "failed (timeout)"},
			// The second open period is 100ms: still open after 60ms.
			{wait: 60 * time.Millisecond, fn: refused, want: "calls fail fast"},
			{wait: 60 * time.Millisecond, fn: answer(200), called: true},
		},
		"a rejection of the credentials stops every call": {
			{fn: answer(401), called: true, want: "rejected the credentials (HTTP 401 Unauthorized): no call is made"},
			{wait: 100 * time.Millisecond, fn: refused, want: "no call is made with them until they change"},
		},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			target := testSet().Target("k", "api.example:443")
			for i, s := range steps {
				time.Sleep(s.wait)
				called := false
				resp, err := target.Call(context.Background(), func() (*http.Response, error) {
					called = true
					return s.fn()
				})
				if called != s.called {
					t.Fatalf("step %d: called %v, want %v", i, called, s.called)
				}
				switch {
				case s.want == "" && err != nil:
					t.Fatalf("step %d: %v", i, err)
				case s.want == "":
					_ = resp.Body.Close()
				case err == nil || !strings.Contains(err.Error(), s.want):
					t.Fatalf("step %d: got %v, want an error saying %q", i, err, s.want)
				case !strings.Contains(err.Error(), "api.example:443"):
					t.Fatalf("step %d: %v does not name the target", i, err)
				}
			}
		})
	}
}

// TestBrokenCallsAreBounded: calls to failing targets never hold more than
// BrokenCalls slots; the others are refused at once, with a next try.
func TestBrokenCallsAreBounded(t *testing.T) {
	set := testSet()
	a, b := set.Target("a", "a"), set.Target("b", "b")
	for _, tg := range []*Target{a, b} {
		_, _ = tg.Call(context.Background(), fail(syscall.ECONNREFUSED))
	}
	time.Sleep(60 * time.Millisecond)

	release := make(chan struct{})
	var inFlight sync.WaitGroup
	inFlight.Add(1)
	go func() {
		defer inFlight.Done()
		_, _ = a.Call(context.Background(), func() (*http.Response, error) {
			<-release
			return answer(200)()
		})
	}()
	time.Sleep(20 * time.Millisecond)
	ctx, retryAt := WithRetryHint(context.Background())
	var called atomic.Bool
	_, err := b.Call(ctx, func() (*http.Response, error) { called.Store(true); return answer(200)() })
	close(release)
	inFlight.Wait()
	var e *Error
	if called.Load() || !errors.As(err, &e) || !e.Busy {
		t.Fatalf("a second call to a failing target went out while the only slot was held: %v", err)
	}
	if at := retryAt().At; at.Before(time.Now()) {
		t.Fatalf("the retry hint is %v, want a time to come", at)
	}
	// a is healthy again: its calls take no slot.
	if _, err := a.Call(context.Background(), answer(200)); err != nil {
		t.Fatal(err)
	}
}

func TestCause(t *testing.T) {
	cases := map[string]struct {
		reason string
		resp   *http.Response
		err    error
		want   string
	}{
		"deadline": {reason: "a call that ran out of time says timeout", err: context.DeadlineExceeded, want: "timeout"},
		"refused":  {reason: "a refused connection says so", err: syscall.ECONNREFUSED, want: "connection refused"},
		"reset":    {reason: "so does a reset one", err: syscall.ECONNRESET, want: "connection reset"},
		"tls":      {reason: "a TLS failure is named without the library's detail", err: errors.New("remote error: tls: bad certificate"), want: "TLS failure"},
		"status":   {reason: "an answer the breaker counts as a failure names its status", resp: &http.Response{StatusCode: 502}, want: "HTTP 502 Bad Gateway"},
	}
	for name, tc := range cases {
		if got := Cause(tc.resp, tc.err); got != tc.want {
			t.Errorf("%s\n%s: Cause = %q, want %q", tc.reason, name, got, tc.want)
		}
	}
}

// TestFirstCallVerifiesCredentials: calls that come together to a target with
// new credentials go one at a time until one is answered, so wrong credentials
// cost one failed logon; once accepted, calls run side by side.
func TestFirstCallVerifiesCredentials(t *testing.T) {
	cases := map[string]struct {
		reason    string
		code      int
		wantCalls int32
	}{
		"rejected: one logon":          {reason: "calls that wait for a target's first answer are not sent once it rejected the credentials: IAS locks a user after a few failed logons", code: http.StatusUnauthorized, wantCalls: 1},
		"accepted: every call is made": {reason: "once the credentials are accepted every call goes", code: http.StatusOK, wantCalls: 5},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			target := testSet().Target("k", "tenant.example")
			var calls atomic.Int32
			var wg sync.WaitGroup
			for range 5 {
				wg.Go(func() {
					resp, err := target.Call(context.Background(), func() (*http.Response, error) {
						calls.Add(1)
						time.Sleep(50 * time.Millisecond)
						return answer(tc.code)()
					})
					if err == nil {
						_ = resp.Body.Close()
					}
				})
			}
			wg.Wait()
			if calls.Load() != tc.wantCalls {
				t.Fatalf("%s\n%d calls reached the target, want %d", tc.reason, calls.Load(), tc.wantCalls)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	cases := map[string]time.Duration{"": time.Second, "3": 3 * time.Second, "0": 0, "junk": time.Second}
	for in, want := range cases {
		resp := &http.Response{Header: http.Header{}}
		if in != "" {
			resp.Header.Set("Retry-After", in)
		}
		if got := RetryAfter(resp); got != want {
			t.Errorf("RetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestCanceledCallsOpenNoCircuit: a call its caller canceled (a reconcile
// that ended, a listing dropped, a process stopping) says nothing of the
// target: the next call is made, and no failure is reported.
func TestCanceledCallsOpenNoCircuit(t *testing.T) {
	set := NewSet(Options{Kind: Tenant, BaseDelay: time.Minute, MaxDelay: time.Minute})
	target := set.Target("k", "https://t.example")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := target.Do(ctx, Request{Do: func(ctx context.Context) (*http.Response, error) {
		cancel()
		return nil, ctx.Err()
	}})
	var failed *Error
	if errors.As(err, &failed) {
		t.Fatalf("a canceled call was reported as the target's failure: %v", err)
	}
	called := false
	if _, err := target.Do(context.Background(), Request{Do: func(context.Context) (*http.Response, error) {
		called = true
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}}); err != nil || !called {
		t.Errorf("the call after a canceled one: called %v, err %v; want it made", called, err)
	}
}
