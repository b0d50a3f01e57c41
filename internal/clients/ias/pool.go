package ias

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

// Tenant says how to reach one IAS tenant. It holds credentials: never log it.
type Tenant struct {
	// URL is https://<tenant>.accounts.ondemand.com (http only to loopback).
	URL string
	// Username and Password of a technical user, or ClientCert of a system
	// administrator: one of the two.
	Username   string
	Password   string
	ClientCert *ClientCert
	// CABundle is an optional extra PEM CA trusted for URL.
	CABundle []byte
	// QPS and Burst size the tenant's token bucket.
	QPS   int
	Burst int
}

// digest identifies the credentials and CA without revealing them.
func (t Tenant) digest() string {
	h := sha256.New()
	cert := ""
	if t.ClientCert != nil {
		cert = t.ClientCert.digest
	}
	for _, s := range []string{t.Username, t.Password, cert, string(t.CABundle)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// PoolOptions tune the clients of a Pool.
type PoolOptions struct {
	// Timeout of each attempt of each call. Default 15s.
	Timeout time.Duration
	// Attempts per call, retries included. Default 5.
	Attempts int
	// BaseBackoff before the first retry, doubled each time. Default 500ms.
	BaseBackoff time.Duration
	// MaxBackoff caps the backoff. Default 10s.
	MaxBackoff time.Duration
	// Metrics to count calls in; default unregistered metrics.
	Metrics *Metrics
	// Breakers hold a circuit per tenant and credentials; default
	// NewBreakers(0, nil).
	Breakers *breaker.Set
}

// NewBreakers returns the circuits of IAS tenants: a tenant that does not
// answer a call, or answers 5xx to three in a row, fails fast, with a delay
// that doubles up to a minute (three, since a tenant serves many resources at
// once and a single 5xx should not pause them all);
// one 401 (or 403: every call this provider makes needs the admin role) stops
// all calls with those credentials for rejectedDelay (default 10m), or until
// they change. IAS locks a user after a few failed logons.
func NewBreakers(rejectedDelay time.Duration, m *breaker.Metrics) *breaker.Set {
	return breaker.NewSet(breaker.Options{
		Kind:                 breaker.Tenant,
		ServerErrorThreshold: 3,
		RejectedDelay:        rejectedDelay,
		Rejected: func(r *http.Response) bool {
			return r.StatusCode == http.StatusUnauthorized || r.StatusCode == http.StatusForbidden
		},
		Metrics: m,
	})
}

// A Pool hands out clients and keeps, per tenant URL, what every client of that
// tenant shares: the token bucket, a 429's pause, the connection pool and the
// well-known endpoints.
type Pool struct {
	opts PoolOptions

	mu      sync.Mutex
	tenants map[string]*tenantState
}

type tenantState struct {
	gate *tenantGate
	// wellKnown makes resources that start at once share one fetch of the
	// well-known document.
	wellKnown singleflight.Group

	mu     sync.Mutex
	digest string // of the credentials the state below was made with
	// generation counts the credentials (or CA) the tenant was called with:
	// it goes up each time they change, and what was learnt with an older
	// generation is not kept.
	generation uint64
	http       *http.Client
	endpoints  *Endpoints
}

// NewPool returns an empty Pool.
func NewPool(o PoolOptions) *Pool {
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Second
	}
	if o.Attempts == 0 {
		o.Attempts = 5
	}
	if o.BaseBackoff == 0 {
		o.BaseBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 10 * time.Second
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.Breakers == nil {
		o.Breakers = NewBreakers(0, nil)
	}
	return &Pool{opts: o, tenants: map[string]*tenantState{}}
}

// Rejected tells whether the tenant rejected these credentials (401 or 403)
// and when: no call is made with them until they change or the logon circuit's
// probe is due.
func (p *Pool) Rejected(t Tenant) (time.Time, bool) {
	target, ok := p.opts.Breakers.Find(breakerKey(t, t.digest()))
	if !ok {
		return time.Time{}, false
	}
	return target.Rejected()
}

// Recall opens the circuit of the tenant with these credentials as f records,
// if the Set does not know it yet (see breaker.Set.Recall).
func (p *Pool) Recall(t Tenant, f breaker.Failure) {
	p.opts.Breakers.Recall(breakerKey(t, t.digest()), t.URL, f)
}

// Client returns a client of the tenant. Changed credentials or CA take effect at
// once: they start a new generation, which drops the tenant's cached endpoints.
func (p *Pool) Client(t Tenant) (Client, error) {
	if t.QPS <= 0 || t.Burst <= 0 {
		return nil, errors.New("rate limit qps and burst must be positive")
	}
	p.mu.Lock()
	st, ok := p.tenants[t.URL]
	if !ok {
		st = &tenantState{gate: &tenantGate{url: t.URL, limiter: rate.NewLimiter(rate.Limit(t.QPS), t.Burst)}}
		p.tenants[t.URL] = st
	}
	p.mu.Unlock()

	if st.gate.limiter.Limit() != rate.Limit(t.QPS) {
		st.gate.limiter.SetLimit(rate.Limit(t.QPS))
	}
	if st.gate.limiter.Burst() != t.Burst {
		st.gate.limiter.SetBurst(t.Burst)
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	if d := t.digest(); st.digest != d || st.http == nil {
		// Circuits are kept per credentials: new ones start closed, and a
		// rejection of the old ones is kept should they come back (two
		// ProviderConfigs of one tenant, one with a wrong password).
		hc, err := p.httpClient(t, st.gate, p.opts.Breakers.Guard(breakerKey(t, d), t.URL))
		if err != nil {
			return nil, err
		}
		if st.http != nil {
			st.http.CloseIdleConnections()
		}
		st.digest, st.http, st.endpoints = d, hc, nil
		st.generation++
	}
	return newClient(t, st)
}

// breakerKey names a tenant's circuits: its URL and credentials.
func breakerKey(t Tenant, digest string) string { return t.URL + "#" + digest }

func (p *Pool) httpClient(t Tenant, gate *tenantGate, guard breaker.Guard) (*http.Client, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.ClientCert != nil {
		tlsCfg.Certificates = []tls.Certificate{t.ClientCert.Certificate}
	}
	if len(t.CABundle) > 0 {
		roots, err := x509.SystemCertPool()
		if err != nil || roots == nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM(t.CABundle) {
			return nil, errors.New("the CA bundle holds no PEM certificate")
		}
		tlsCfg.RootCAs = roots
	}
	base := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	return &http.Client{
		Transport: &transport{next: base, gate: gate, guard: guard, metrics: p.opts.Metrics, policy: retryPolicy{
			attempts: p.opts.Attempts, baseBackoff: p.opts.BaseBackoff, maxBackoff: p.opts.MaxBackoff, timeout: p.opts.Timeout,
		}},
		// IAS answers creation with a relative Location; never follow redirects.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}
