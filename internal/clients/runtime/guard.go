package runtime

import (
	"context"
	"io"
	"net/http"
	"time"

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
	call    func(context.Context, func() (*http.Response, error)) (*http.Response, error)
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
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	})
}

// cancelOnClose ends a request's timeout once its body is read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
