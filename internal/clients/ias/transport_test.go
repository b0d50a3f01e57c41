package ias

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

// TestTransportRetries checks which answers are retried, per method, and that
// what shows the tenant failing comes back as an error naming the cause.
func TestTransportRetries(t *testing.T) {
	cases := map[string]struct {
		reason    string
		method    string
		answers   []int // status per attempt; the last repeats; 0 hangs
		wantCalls int32
		wantCode  int
		wantErr   string
	}{
		"GET 500 then 200": {
			reason: "a read that fails with a 5xx is sent again, up to the attempts",
			method: http.MethodGet, answers: []int{500, 500, 200}, wantCalls: 3, wantCode: 200,
		},
		"GET 500 every time": {
			reason: "after the last attempt the failure is returned, naming the status",
			method: http.MethodGet, answers: []int{500}, wantCalls: 3, wantErr: "failed (HTTP 500 Internal Server Error)",
		},
		"POST 500 is not resent": {
			reason: "a create that failed may have made the app: sending it again could make a second",
			method: http.MethodPost, answers: []int{500, 201}, wantCalls: 1, wantErr: "failed (HTTP 500 Internal Server Error)",
		},
		"POST 429 is resent": {
			reason: "a 429 was not carried out, so even a create is sent again",
			method: http.MethodPost, answers: []int{429, 201}, wantCalls: 2, wantCode: 201,
		},
		"DELETE 503 then 200": {
			reason: "a deletion is idempotent and sent again",
			method: http.MethodDelete, answers: []int{503, 200}, wantCalls: 2, wantCode: 200,
		},
		"GET 404 is final": {
			reason: "a 404 is an answer, not a failure",
			method: http.MethodGet, answers: []int{404, 200}, wantCalls: 1, wantCode: 404,
		},
		"GET timeout is not resent": {
			reason: "a hung tenant is not asked again within the call: its circuit opens",
			method: http.MethodGet, answers: []int{0, 200}, wantCalls: 1, wantErr: "failed (timeout)",
		},
		"GET 401 is not resent": {
			reason: "rejected credentials are never tried again at once: IAS locks a user after a few failed logons",
			method: http.MethodGet, answers: []int{401, 200}, wantCalls: 1, wantErr: "rejected the credentials (HTTP 401 Unauthorized)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1)) - 1
				code := tc.answers[min(n, len(tc.answers)-1)]
				if code == 0 {
					// Read the body so that the server notices the client leave.
					_, _ = io.Copy(io.Discard, r.Body)
					<-r.Context().Done()
					return
				}
				if code == 429 {
					w.Header().Set("Retry-After", "0")
				}
				w.WriteHeader(code)
			}))
			defer srv.Close()
			tr := &transport{next: http.DefaultTransport, metrics: NewMetrics(nil),
				gate:   &tenantGate{url: srv.URL, limiter: rate.NewLimiter(rate.Inf, 1)},
				guard:  NewBreakers(0, nil).Guard(srv.URL, srv.URL),
				policy: retryPolicy{attempts: 3, baseBackoff: time.Millisecond, maxBackoff: 5 * time.Millisecond, timeout: 200 * time.Millisecond}}
			req, _ := http.NewRequestWithContext(context.Background(), tc.method, srv.URL+"/Applications/v1/", strings.NewReader("{}"))
			resp, err := tr.RoundTrip(req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || calls.Load() != tc.wantCalls {
					t.Fatalf("%s\ngot error %v after %d calls, want one saying %q after %d", tc.reason, err, calls.Load(), tc.wantErr, tc.wantCalls)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.wantCode || calls.Load() != tc.wantCalls {
				t.Fatalf("%s\ngot %d after %d calls, want %d after %d", tc.reason, resp.StatusCode, calls.Load(), tc.wantCode, tc.wantCalls)
			}
		})
	}
}

// TestRetryAfterPausesTheTenant checks a 429 holds back every request to the tenant.
func TestRetryAfterPausesTheTenant(t *testing.T) {
	g := &tenantGate{limiter: rate.NewLimiter(rate.Inf, 1)}
	g.blockFor(300 * time.Millisecond)
	start := time.Now()
	if err := g.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("waited %v, want at least the Retry-After", d)
	}
}

// TestRetryAfterHoldsCallsInTheBucket: a call already waiting in the token
// bucket when a 429 arrives does not go out before the pause ends, whether IAS
// gives Retry-After in seconds or as an HTTP date.
func TestRetryAfterHoldsCallsInTheBucket(t *testing.T) {
	cases := map[string]func() string{
		"seconds":   func() string { return "2" },
		"HTTP date": func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) },
	}
	for name, retryAfter := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var (
				mu       sync.Mutex
				answered []time.Time // when each request arrived
				pausedAt time.Time
			)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				answered = append(answered, time.Now())
				if len(answered) == 2 {
					pausedAt = time.Now()
					w.Header().Set("Retry-After", retryAfter())
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				w.WriteHeader(http.StatusOK)
			}))
			defer srv.Close()
			// 5 calls at 10 per second: four wait in the bucket when the 429 comes.
			tr := &transport{next: http.DefaultTransport, metrics: NewMetrics(nil),
				gate:   &tenantGate{url: srv.URL, limiter: rate.NewLimiter(10, 1)},
				guard:  NewBreakers(0, nil).Guard(srv.URL, srv.URL),
				policy: retryPolicy{attempts: 3, baseBackoff: time.Millisecond, maxBackoff: 5 * time.Millisecond, timeout: 5 * time.Second}}
			// A first call shows the tenant accepts the credentials.
			first, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/Applications/v1/", nil)
			if resp, err := tr.RoundTrip(first); err != nil {
				t.Fatal(err)
			} else {
				_ = resp.Body.Close()
			}
			var wg sync.WaitGroup
			for range 5 {
				wg.Go(func() {
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/Applications/v1/", nil)
					if resp, err := tr.RoundTrip(req); err == nil {
						_ = resp.Body.Close()
					}
				})
			}
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			if len(answered) != 7 {
				t.Fatalf("%d requests reached the tenant, want 7 (a first call, five more, one resent after the 429)", len(answered))
			}
			// An HTTP date has whole seconds: the pause may end up to 1s early.
			least := 2 * time.Second
			if name == "HTTP date" {
				least = time.Second
			}
			for _, at := range answered[2:] {
				if d := at.Sub(pausedAt); d < least-50*time.Millisecond {
					t.Errorf("a request went out %v after the 429, inside its pause of at least %v", d, least)
				}
			}
		})
	}
}

// TestNoWorkerWaitsOnATenantsPause: a tenant that answers 429 with a pause of
// an hour, or 429 again and again, costs a call no sleep: the call fails as a
// failure of the tenant, the tenant's circuit opens, and later calls fail
// fast without a request, instead of parking the workers.
func TestNoWorkerWaitsOnATenantsPause(t *testing.T) {
	cases := map[string]struct {
		reason     string
		retryAfter string
		wantCalls  int32
	}{
		"an hour":          {reason: "a Retry-After of an hour is not waited out", retryAfter: "3600", wantCalls: 1},
		"a second, always": {reason: "a short pause is waited once; a second 429 in the call fails it", retryAfter: "1", wantCalls: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				calls.Add(1)
				w.Header().Set("Retry-After", tc.retryAfter)
				w.WriteHeader(http.StatusTooManyRequests)
			}))
			defer srv.Close()
			gate := &tenantGate{url: srv.URL, limiter: rate.NewLimiter(rate.Inf, 1)}
			tr := &transport{next: http.DefaultTransport, metrics: NewMetrics(nil), gate: gate,
				guard:  NewBreakers(0, nil).Guard(srv.URL, srv.URL),
				policy: retryPolicy{attempts: 5, baseBackoff: time.Millisecond, maxBackoff: 5 * time.Millisecond, timeout: 5 * time.Second}}
			call := func() error {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/Applications/v1/", nil)
				resp, err := tr.RoundTrip(req)
				if err == nil {
					_ = resp.Body.Close()
				}
				return err
			}
			start := time.Now()
			err := call()
			var failed *breaker.Error
			if !errors.As(err, &failed) || failed.Cause != breaker.Cause(nil, &breaker.ThrottledError{}) {
				t.Fatalf("%s\ngot %v, want the call failed on the tenant's 429", tc.reason, err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("%s\nthe call took %v", tc.reason, d)
			}
			start = time.Now()
			if err := call(); !failedFast(err) {
				t.Errorf("%s\nthe next call: %v, want it refused by the open circuit", tc.reason, err)
			}
			if d := time.Since(start); d > 100*time.Millisecond {
				t.Errorf("%s\nthe next call took %v", tc.reason, d)
			}
			if n := calls.Load(); n != tc.wantCalls {
				t.Errorf("%s\nthe tenant got %d requests, want %d", tc.reason, n, tc.wantCalls)
			}
			if gate.paused(time.Now().Add(maxTenantPause + time.Second)) {
				t.Errorf("%s\nthe tenant's pause outlasts %v", tc.reason, maxTenantPause)
			}
		})
	}
}

// failedFast tells whether err is a call refused by an open circuit.
func failedFast(err error) bool {
	var e *breaker.Error
	return errors.As(err, &e) && e.FailedFast
}
