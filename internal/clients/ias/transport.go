package ias

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/bodyctx"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

// tenantGate is the per-tenant token bucket plus the pause a 429 imposes on every
// request to that tenant.
type tenantGate struct {
	url     string
	limiter *rate.Limiter

	mu           sync.Mutex
	blockedUntil time.Time
}

// A 429's pause up to maxCallPause is waited out inside a call (IAS asks for a
// second or so when the provider exceeds its rate); a longer one, or a second
// 429 within one call, fails the call as a failure of the tenant, so that its circuit
// opens and no worker sleeps on a tenant that throttles for good. The tenant's
// pause is held at most maxTenantPause, whatever Retry-After says.
const (
	maxCallPause   = 2 * time.Second
	maxTenantPause = time.Minute
	max429InACall  = 2
)

func (g *tenantGate) wait(ctx context.Context) error {
	if err := g.outlastPause(ctx); err != nil {
		return err
	}
	if err := g.limiter.Wait(ctx); err != nil {
		return err
	}
	// A 429 may have come while this call waited in the token bucket.
	return g.outlastPause(ctx)
}

// outlastPause sleeps until no 429's pause holds, checking again after each
// sleep, since another 429 may have extended it meanwhile; a pause longer than
// a call waits fails the call instead (ThrottledError).
func (g *tenantGate) outlastPause(ctx context.Context) error {
	for {
		g.mu.Lock()
		d := time.Until(g.blockedUntil)
		g.mu.Unlock()
		if d <= 0 {
			return nil
		}
		if d > maxCallPause {
			return &breaker.ThrottledError{RetryAfter: d}
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// paused tells whether a 429's pause still holds.
func (g *tenantGate) paused(now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return now.Before(g.blockedUntil)
}

func (g *tenantGate) blockFor(d time.Duration) {
	d = min(d, maxTenantPause)
	g.mu.Lock()
	defer g.mu.Unlock()
	if until := time.Now().Add(d); until.After(g.blockedUntil) {
		g.blockedUntil = until
	}
}

// retryPolicy says how often and how long to retry.
type retryPolicy struct {
	attempts    int           // total attempts, at least 1
	baseBackoff time.Duration // doubled per attempt, with jitter
	maxBackoff  time.Duration
	timeout     time.Duration // per attempt
}

// transport sends each call through the tenant's circuits, and each attempt
// through the tenant's gate, with a timeout, counts it, and retries what is
// safe and quick to retry: idempotent requests on 5xx and on errors other than
// a timeout, any request on 429 (IAS did not process it). A timeout is not
// retried here: a tenant that does not answer would hold the worker for every
// attempt; its circuit opens and the workqueue tries again.
type transport struct {
	next    http.RoundTripper
	gate    *tenantGate
	guard   breaker.Guard
	policy  retryPolicy
	metrics *Metrics
	// logon holds back a password the tenant has not accepted yet while
	// another password of the same user was rejected; nil for a certificate.
	logon *passwordLogon
}

// passwordLogon is one password of a user, as userLogons counts it.
type passwordLogon struct {
	user   *userLogons
	digest string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	probe := false
	if l := t.logon; l != nil {
		var err error
		if probe, err = l.user.admit(l.digest, time.Now()); err != nil {
			return nil, err
		}
	}
	answered := false
	resp, err := t.guard(req.Context(), breaker.Request{Do: func(context.Context) (*http.Response, error) {
		// IAS's own answer, before the circuit turns a rejection into an error.
		resp, err := t.attempts(req)
		answered = true
		t.recordLogon(probe, resp)
		return resp, err
	}})
	if !answered {
		t.recordLogon(probe, nil)
	}
	return resp, err
}

// recordLogon tells the password's user what IAS answered; nothing for a
// certificate logon.
func (t *transport) recordLogon(probe bool, resp *http.Response) {
	if l := t.logon; l != nil {
		l.user.record(l.digest, probe, resp, time.Now())
	}
}

func (t *transport) attempts(req *http.Request) (*http.Response, error) {
	op := operationFrom(req.Context())
	idempotent := req.Method != http.MethodPost
	// Doubling, capped, with jitter so that retries of many resources spread.
	backoff := wait.Backoff{Duration: t.policy.baseBackoff, Factor: 2, Jitter: 0.5, Steps: t.policy.attempts, Cap: t.policy.maxBackoff}
	throttled := 0
	for attempt := 1; ; attempt++ {
		start := time.Now()
		if own := ownLimiterFrom(req.Context()); own != nil {
			if err := own.Wait(req.Context()); err != nil {
				return nil, err
			}
		}
		if err := t.gate.wait(req.Context()); err != nil {
			return nil, err
		}
		t.metrics.waits.WithLabelValues(t.gate.url).Observe(time.Since(start).Seconds())

		resp, cancel, err := t.send(req, op)
		last := attempt >= t.policy.attempts || req.Context().Err() != nil
		retry := false
		var retryAfter time.Duration
		switch {
		case err != nil:
			retry = idempotent && !timedOut(req.Context(), err)
		case resp.StatusCode == http.StatusTooManyRequests:
			retry = true
			retryAfter = breaker.RetryAfter(resp)
			t.gate.blockFor(retryAfter)
			if throttled++; retryAfter > maxCallPause || throttled >= max429InACall || last {
				drain(resp)
				cancel()
				return nil, &breaker.ThrottledError{RetryAfter: retryAfter}
			}
		case resp.StatusCode >= 500:
			retry = idempotent
		}
		if !retry || last {
			if err != nil {
				cancel()
				return nil, err
			}
			limit := maxAnswerBytes(op)
			if err := bodyctx.Bound(resp, limit, cancel, func() error { return &TooLargeError{Operation: op, Limit: limit} }); err != nil {
				return nil, err
			}
			return resp, nil
		}
		if resp != nil {
			drain(resp)
		}
		cancel()
		if err := sleep(req.Context(), max(retryAfter, backoff.Step())); err != nil {
			return nil, err
		}
	}
}

// drain reads a little of an answer not used and closes it, so that its
// connection may serve again.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
}

func (t *transport) send(req *http.Request, op string) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.policy.timeout)
	r := req.Clone(ctx)
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			cancel()
			return nil, nil, err
		}
		r.Body = body
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	t.metrics.duration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil && ctx.Err() != nil {
		// The transport goes on setting up the connection of an attempt that
		// timed out, for later calls: a tenant that accepts and never
		// answers would pin a socket per attempt.
		utilnet.CloseIdleConnectionsFor(t.next)
	}
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	t.metrics.requests.WithLabelValues(op, code).Inc()
	switch {
	case err != nil:
	case resp.StatusCode == http.StatusUnauthorized:
		t.metrics.failedLogons.WithLabelValues(t.gate.url).Inc()
	case resp.StatusCode < 300 || resp.StatusCode == http.StatusNotFound:
		// A 404 is IAS answering (an app already gone), not IAS failing.
		t.metrics.lastSuccess.WithLabelValues(t.gate.url).SetToCurrentTime()
	}
	return resp, cancel, err
}

// timedOut tells whether an attempt failed on its own timeout, not the caller's.
func timedOut(caller context.Context, err error) bool {
	return caller.Err() == nil && errors.Is(err, context.DeadlineExceeded)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// operationKey carries the name of the operation a request belongs to,
// ownLimiterKey the token bucket of the ProviderConfig that makes it.
type (
	operationKey  struct{}
	ownLimiterKey struct{}
)

// withOperation names the operation of the requests made with ctx; each client
// method names its own.
func withOperation(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, operationKey{}, op)
}

// withOperation names the operation of the requests made with ctx and the
// client's own token bucket, which they wait in before the tenant's.
func (c *client) withOperation(ctx context.Context, op string) context.Context {
	return context.WithValue(withOperation(ctx, op), ownLimiterKey{}, c.own)
}

func ownLimiterFrom(ctx context.Context) *rate.Limiter {
	l, _ := ctx.Value(ownLimiterKey{}).(*rate.Limiter)
	return l
}

func operationFrom(ctx context.Context) string {
	if op, ok := ctx.Value(operationKey{}).(string); ok {
		return op
	}
	return "other"
}
