package kymaruntime

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNoWorkerWaitsOnARuntimesPause: a runtime's API server that asks for an
// hour's pause, with a 429 or a 503, gets one request; the call fails at once
// with an error saying so, client-go neither sleeps nor sends again, and the
// next call fails fast on the runtime's open circuit.
func TestNoWorkerWaitsOnARuntimesPause(t *testing.T) {
	cases := map[string]struct {
		reason  string
		code    int
		wantErr string
	}{
		"429 for an hour": {reason: "a runtime that throttles for good must not hold a worker for its Retry-After",
			code: http.StatusTooManyRequests, wantErr: "HTTP 429 Too Many Requests"},
		"503 for an hour": {reason: "client-go would sleep for a 5xx's Retry-After and send again, outside the circuit",
			code: http.StatusServiceUnavailable, wantErr: "HTTP 503"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				calls.Add(1)
				w.Header().Set("Retry-After", "3600")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":` + strconv.Itoa(tc.code) + `}`))
			}))
			defer srv.Close()
			ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
			kc := []byte(strings.Replace(strings.Replace(kubeconfig("", "    token: runtime-token"), "Q0EtREFUQS1TRUNSRVQ=", ca, 1), "https://api.rt.example:443", srv.URL, 1))
			core, err := NewClients(Options{}).For(kc)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err = core.Secrets("ns").Get(ctx, "s", metav1.GetOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("%s\ngot %v, want an error saying %q", tc.reason, err, tc.wantErr)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("%s\nthe call took %v", tc.reason, d)
			}
			_, err = core.Secrets("ns").Get(ctx, "s", metav1.GetOptions{})
			if !failedFast(err) {
				t.Errorf("%s\nthe second call: %v, want it refused by the open circuit", tc.reason, err)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("%s\nthe runtime got %d requests, want 1", tc.reason, n)
			}
		})
	}
}
