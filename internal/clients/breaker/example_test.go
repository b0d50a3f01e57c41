package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

// This example guards the calls to runtimes' API servers: a Set holds one
// breaker per runtime, a call goes through its runtime's Target, and a
// failure comes back as a *breaker.Error that says what failed and when the
// runtime is tried again. Calls to a runtime known to fail fail fast, without
// reaching it, so that it holds back no other runtime's work.
func Example() {
	runtimes := breaker.NewSet(breaker.Options{Kind: breaker.Runtime, BaseDelay: time.Minute})

	// A runtime whose API server answers 503.
	reached := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached++
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	rt := runtimes.Target("runtime-a", "runtime-a")
	get := func() (*http.Response, error) { return http.Get(srv.URL) }

	for range 3 {
		_, err := rt.Call(context.Background(), get)
		if e := (*breaker.Error)(nil); errors.As(err, &e) {
			fmt.Printf("cause: %s, failed fast: %v, next try in about a minute: %v\n",
				e.Cause, e.FailedFast, time.Until(e.Next) > 50*time.Second)
		}
	}
	fmt.Println("calls that reached the runtime:", reached)

	// Output:
	// cause: HTTP 503 Service Unavailable, failed fast: false, next try in about a minute: true
	// cause: HTTP 503 Service Unavailable, failed fast: true, next try in about a minute: true
	// cause: HTTP 503 Service Unavailable, failed fast: true, next try in about a minute: true
	// calls that reached the runtime: 1
}
