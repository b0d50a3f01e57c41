package kymaruntime

import (
	"context"
	"net/http"
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/bodyctx"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

// NewBreakers returns the circuits of runtime API servers: a runtime that does
// not answer, refuses connections, fails TLS or answers 5xx fails fast, with a
// delay that doubles up to a minute.
func NewBreakers(m *breaker.Metrics) *breaker.Set {
	return breaker.NewSet(breaker.Options{Kind: breaker.Runtime, Metrics: m})
}

// guard sends each request through the runtime's circuit, with a timeout.
type guard struct {
	next    http.RoundTripper
	call    breaker.Guard
	timeout time.Duration
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	return g.call(req.Context(), func() (*http.Response, error) {
		ctx, cancel := context.WithTimeout(req.Context(), g.timeout)
		resp, err := g.next.RoundTrip(req.WithContext(ctx))
		if err != nil {
			cancel()
			return nil, err
		}
		resp.Body = bodyctx.CancelOnClose(resp.Body, cancel)
		return resp, nil
	})
}
