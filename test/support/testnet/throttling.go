package testnet

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Throttling is a runtime API server over TLS that answers every request 429
// with Retry-After of an hour, as one that throttles for good does. It serves
// until the test ends; its certificate (Certificate().Raw) is the CA to trust.
func Throttling(tb testing.TB) *httptest.Server {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":429}`))
	}))
	tb.Cleanup(srv.Close)
	return srv
}
