package ias

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func TestParseRetryAfter(t *testing.T) {
	cases := map[string]time.Duration{"": time.Second, "3": 3 * time.Second, "0": 0, "junk": time.Second}
	for in, want := range cases {
		if got := parseRetryAfter(in); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestTransportRetries checks which answers are retried, per method.
func TestTransportRetries(t *testing.T) {
	cases := map[string]struct {
		method    string
		answers   []int // status per attempt; the last repeats
		wantCalls int32
		wantCode  int
	}{
		"GET 500 then 200":       {http.MethodGet, []int{500, 500, 200}, 3, 200},
		"GET 500 every time":     {http.MethodGet, []int{500}, 3, 500},
		"POST 500 is not resent": {http.MethodPost, []int{500, 201}, 1, 500},
		"POST 429 is resent":     {http.MethodPost, []int{429, 201}, 2, 201},
		"DELETE 503 then 200":    {http.MethodDelete, []int{503, 200}, 2, 200},
		"GET 404 is final":       {http.MethodGet, []int{404, 200}, 1, 404},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				n := int(calls.Add(1)) - 1
				code := tc.answers[min(n, len(tc.answers)-1)]
				if code == 429 {
					w.Header().Set("Retry-After", "0")
				}
				w.WriteHeader(code)
			}))
			defer srv.Close()
			tr := &transport{next: http.DefaultTransport, metrics: NewMetrics(nil),
				gate:   &tenantGate{url: srv.URL, limiter: rate.NewLimiter(rate.Inf, 1)},
				policy: retryPolicy{attempts: 3, baseBackoff: time.Millisecond, maxBackoff: 5 * time.Millisecond, timeout: time.Second}}
			req, _ := http.NewRequestWithContext(context.Background(), tc.method, srv.URL+"/Applications/v1/", strings.NewReader("{}"))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.wantCode || calls.Load() != tc.wantCalls {
				t.Fatalf("got %d after %d calls, want %d after %d", resp.StatusCode, calls.Load(), tc.wantCode, tc.wantCalls)
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
