package kymaruntime

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClientsNeverLeaveTheServer: a runtime's API server that answers with a
// redirect to another host (whose certificate the same CA signed), or with an
// answer larger than MaxAnswerBytes, fails the call; the token and the
// Secret's data never reach the other host, and the error says why.
func TestClientsNeverLeaveTheServer(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","namespace":"ns"}}`))
	}))
	defer other.Close()
	cases := map[string]struct {
		reason  string
		answer  func(w http.ResponseWriter, r *http.Request)
		wantErr string
	}{
		"307 to another host": {reason: "a runtime's API server that redirects elsewhere could send the provider's requests to any address", answer: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}, wantErr: "a redirect to another address, not followed"},
		"301 to another host": {reason: "the same for a permanent redirect", answer: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusMovedPermanently)
		}, wantErr: "a redirect to another address, not followed"},
		"an answer of 8 MiB": {reason: "every answer from a runtime is bounded in size", answer: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","namespace":"ns"},"data":{"x":"` + strings.Repeat("A", 8<<20) + `"}}`))
		}, wantErr: "larger than 4 MiB"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			elsewhere.Store(0)
			srv := httptest.NewTLSServer(http.HandlerFunc(tc.answer))
			defer srv.Close()
			ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
			kc := []byte(strings.Replace(strings.Replace(kubeconfig("", "    token: runtime-token"), "Q0EtREFUQS1TRUNSRVQ=", ca, 1), "https://api.rt.example:443", srv.URL, 1))
			core, err := NewClients(Options{}).For(kc)
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			_, err = core.Secrets("ns").Get(context.Background(), "s", metav1.GetOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("%s\ngot %v, want an error saying %q", tc.reason, err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "runtime-token") {
				t.Errorf("%s\nthe error carries the token: %v", tc.reason, err)
			}
			if n := elsewhere.Load(); n != 0 {
				t.Errorf("%s\n%d requests reached the other host", tc.reason, n)
			}
		})
	}
}
