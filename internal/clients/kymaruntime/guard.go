package kymaruntime

import (
	"context"
	"fmt"
	"net/http"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/bodyctx"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

// NewBreakers returns the circuits of runtime API servers: a runtime that does
// not answer, refuses connections, fails TLS or answers 5xx fails fast, with a
// delay that doubles from BaseDelay up to MaxDelay. A runtime not heard from for
// Fresh is of unknown health again: its next call is a first contact, bounded
// as calls to failing runtimes are.
// The first contacts of platformScope's runtimes (the Kyma namespace's)
// have permits of their own (breaker.WithScope).
func NewBreakers(m *breaker.Metrics, platformScope string) *breaker.Set {
	return breaker.NewSet(breaker.Options{Kind: breaker.Runtime, BaseDelay: BaseDelay, MaxDelay: MaxDelay, Fresh: Fresh, Metrics: m,
		PlatformScope: platformScope})
}

// BaseDelay is a failing runtime's first open period. Runtimes fail in
// crowds (a region's network, a hibernation wave), and every try is a status
// write on its RuntimeSecret: from 30s, a thousand runtimes that went at once
// write twice in their first minute and a half, not five times. A Ready
// runtime's Secret is there already; a blip costs a new one 30s.
const BaseDelay = 30 * time.Second

// MaxDelay caps a failing runtime's open period at the default poll: a runtime
// that stays away (hibernated, deprovisioned, cut off) is tried about as
// often as a healthy one is polled, and each try is a status write on its
// RuntimeSecret (the condition names the next try): a thousand hibernated
// runtimes at the tenant's 50s cap would write 20 times a second for ever. A
// blip is still retried after 30s, 60s, 120s, ...
const MaxDelay = 5 * time.Minute

// Fresh is how long an answer keeps a runtime known healthy. A runtime is
// called at its polls (minutes apart) and, while it changes, seconds apart:
// at a poll its health is not known any more, since a region's network or a
// hibernation wave takes a thousand runtimes at once between two polls.
const Fresh = 30 * time.Second

// MaxAnswerBytes bounds what is read of one answer of a runtime's API server:
// the provider reads one Secret at a time, which the API server holds to 1 MiB.
const MaxAnswerBytes = 4 << 20

var errAnswerTooLarge = fmt.Errorf("the runtime's answer is larger than %d MiB and was not read", MaxAnswerBytes>>20)

// guard sends each request through the runtime's circuit, with a timeout,
// refuses to follow redirects, counts a 429 as a failure and bounds the
// answers it reads.
type guard struct {
	next    http.RoundTripper
	call    breaker.Guard
	timeout time.Duration
}

// CloseIdleConnections closes the runtime's idle connections and those still
// being set up that no call waits for.
func (g *guard) CloseIdleConnections() { utilnet.CloseIdleConnectionsFor(g.next) }

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	read := req.Method == http.MethodGet || req.Method == http.MethodHead
	return g.call(req.Context(), breaker.Request{Read: read, Do: func(ctx context.Context) (*http.Response, error) {
		ctx, cancel := context.WithTimeout(ctx, g.timeout)
		resp, err := g.next.RoundTrip(req.WithContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				// The transport goes on setting up the connection of a call
				// that timed out, for later calls: a runtime that accepts and
				// never answers would pin a socket per call.
				g.CloseIdleConnections()
			}
			cancel()
			return nil, err
		}
		if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified {
			// Never followed: the request carries the runtime's token or
			// client certificate and a Secret's data, which go to the
			// kubeconfig's server only. A failure, for the circuit too.
			_ = resp.Body.Close()
			cancel()
			return nil, breaker.ErrRedirect
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			// A failure of the runtime, for its circuit: the API server's
			// Retry-After is not waited out by a worker.
			after := breaker.RetryAfter(resp)
			_ = resp.Body.Close()
			cancel()
			return nil, &breaker.ThrottledError{RetryAfter: after}
		}
		// client-go sleeps for a 5xx's Retry-After and sends again, outside
		// the call's timeout and beside the circuit: the circuit decides when
		// the runtime is called again, so client-go never sees one.
		resp.Header.Del("Retry-After")
		if err := bodyctx.Bound(resp, MaxAnswerBytes, cancel, func() error { return errAnswerTooLarge }); err != nil {
			return nil, err
		}
		return resp, nil
	}})
}
