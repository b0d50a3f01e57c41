package ias

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
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
	// Namespace is the namespace of the ProviderConfig these come from; empty
	// for a ClusterProviderConfig, the platform's. Failed logons are counted
	// per namespace (see userLogons).
	Namespace string
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
	// TenantQPS and TenantBurst size each tenant URL's budget, shared by
	// every ProviderConfig naming it; default DefaultTenantQPS and
	// DefaultTenantBurst.
	TenantQPS   int
	TenantBurst int
	// IdleAfter drops the state of credentials unused this long; default 1h.
	IdleAfter time.Duration
	// MaxPages bounds a listing of a tenant not yet listed whole; default
	// DefaultMaxPages.
	MaxPages int
	// LogonBackoff is how long after IAS rejected a password of a user from a
	// namespace no other password of the user that IAS has not accepted yet
	// is tried from that namespace;
	// default breaker.DefaultRejectedDelay.
	LogonBackoff time.Duration
	// MaxNamespaced bounds the credentials (each with its connections and
	// circuits) and the users the pool keeps for namespaced ProviderConfigs,
	// each; default DefaultMaxNamespaced. The platform's are not counted:
	// they are as many as its ClusterProviderConfigs.
	MaxNamespaced int
}

// DefaultMaxNamespaced is how many credentials, and users, of namespaced
// ProviderConfigs the pool keeps at most; a few KiB each, more with open
// connections.
const DefaultMaxNamespaced = 1024

// ErrNamespacedFull is a namespaced ProviderConfig's call refused because the
// pool keeps as many namespaced credentials as it may; it passes once unused
// ones are dropped.
var ErrNamespacedFull = errors.New("the provider keeps as many credentials of namespaced ProviderConfigs as it may; " +
	"it takes new ones as others are no longer used")

// The default budget of one tenant URL: IAS allows 50 requests a second per
// client IP address; the ProviderConfigs' own default is 40, so a second
// ProviderConfig of the same tenant can spend the rest without pushing the
// provider into 429s.
const (
	DefaultTenantQPS   = 45
	DefaultTenantBurst = 10
)

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

// A Pool hands out clients. It keeps two kinds of state apart:
//   - per tenant URL, what is a fact of the tenant and the provider's IP
//     address, shared by every ProviderConfig that names it: a 429's pause and
//     the tenant's request budget (PoolOptions.TenantQPS), which the sum of all
//     its ProviderConfigs' calls stays within;
//   - per tenant URL and credentials, what is learnt with them: connections,
//     well-known endpoints and (in package inventory) listings. Other
//     credentials for the same URL (another ProviderConfig's, a wrong
//     password) never reset or read them;
//   - per tenant URL, credentials and rate limit, a ProviderConfig's own token
//     bucket, within the tenant's budget: one ProviderConfig's rateLimit never
//     slows another's calls.
type Pool struct {
	opts PoolOptions

	mu    sync.Mutex
	gates map[string]*tenantGate
	// users count failed logons per tenant, username and namespace
	// (userLogons).
	users      map[userKey]*userLogons
	states     map[string]*tenantState
	lastSweep  time.Time
	generation uint64
	// namespacedStates and namespacedUsers count the entries made for
	// namespaced configs, bounded by MaxNamespaced.
	namespacedStates, namespacedUsers int
}

type tenantState struct {
	gate *tenantGate
	// wellKnown makes resources that start at once share one fetch of the
	// well-known document.
	wellKnown singleflight.Group
	// lastUsed (unix nanoseconds) lets states of credentials no longer used be
	// dropped.
	lastUsed atomic.Int64
	// listedApps is how many apps the last complete listing of the tenant
	// showed with these credentials, or, once a listing stopped at its page
	// limit, the apps it read (raiseListed); it bounds the pages of later
	// listings.
	listedApps atomic.Int64
	// maxPages bounds a listing while listedApps is 0.
	maxPages int

	// generation names this state among the Pool's (Client.Generation).
	generation uint64
	// namespaced: made for a namespaced config, counted against MaxNamespaced.
	namespaced bool

	mu        sync.Mutex
	http      *http.Client
	endpoints *Endpoints
	// limiters are the own rates of the ProviderConfigs with these
	// credentials.
	limiters map[rateLimit]*rate.Limiter
}

// rateLimit is a ProviderConfig's rate: its token bucket's key.
type rateLimit struct{ qps, burst int }

// limiter returns the token bucket of this rate; the caller holds st.mu.
func (st *tenantState) limiter(t Tenant) *rate.Limiter {
	k := rateLimit{t.QPS, t.Burst}
	l, ok := st.limiters[k]
	if !ok {
		l = rate.NewLimiter(rate.Limit(t.QPS), t.Burst)
		st.limiters[k] = l
	}
	return l
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
	if o.TenantQPS <= 0 {
		o.TenantQPS = DefaultTenantQPS
	}
	if o.TenantBurst <= 0 {
		o.TenantBurst = DefaultTenantBurst
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.IdleAfter <= 0 {
		o.IdleAfter = time.Hour
	}
	if o.LogonBackoff <= 0 {
		o.LogonBackoff = breaker.DefaultRejectedDelay
	}
	if o.MaxNamespaced <= 0 {
		o.MaxNamespaced = DefaultMaxNamespaced
	}
	return &Pool{opts: o, gates: map[string]*tenantGate{}, users: map[userKey]*userLogons{}, states: map[string]*tenantState{}}
}

// userKey names a technical user of a tenant (TenantID), as the configs of
// one namespace, or the platform's (namespace ""), use it.
type userKey struct{ tenant, username, namespace string }

// userKeyOf names t's user at the tenant id (TenantID).
func userKeyOf(t Tenant, id string) userKey {
	return userKey{id, strings.ToLower(t.Username), t.Namespace}
}

// passwordLogon returns how calls with t's password are counted among its
// user's logons at the tenant id (TenantID); nil for a certificate logon. The
// caller holds p.mu.
func (p *Pool) passwordLogonLocked(t Tenant, id string) *passwordLogon {
	if t.Username == "" || t.Password == "" {
		return nil
	}
	k := userKeyOf(t, id)
	u, ok := p.users[k]
	if !ok {
		u = &userLogons{url: t.URL, username: t.Username, backoff: p.opts.LogonBackoff, platform: t.Namespace == ""}
		p.users[k] = u
		if !u.platform {
			p.namespacedUsers++
		}
	}
	sum := sha256.Sum256([]byte(t.Password))
	return &passwordLogon{user: u, digest: hex.EncodeToString(sum[:])}
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
	// IAS's Set has no platform scope: its targets are bounded with the
	// pool's credentials.
	p.opts.Breakers.Recall(context.Background(), breakerKey(t, t.digest()), t.URL, f)
}

// Client returns a client of the tenant with these credentials, calling at
// most at this rate. Other credentials for the same URL get state of their
// own, another rate limit a token bucket of its own: what one ProviderConfig
// learnt or spends is never dropped or slowed for another.
func (p *Pool) Client(t Tenant) (Client, error) {
	if t.QPS <= 0 || t.Burst <= 0 {
		return nil, errors.New("rate limit qps and burst must be positive")
	}
	d := t.digest()
	key := breakerKey(t, d)
	now := time.Now()
	p.mu.Lock()
	p.sweepLocked(now, false)
	id := TenantID(t.URL)
	if !p.roomLocked(t, id, key, now) {
		p.mu.Unlock()
		return nil, ErrNamespacedFull
	}
	gate, ok := p.gates[id]
	if !ok {
		gate = &tenantGate{url: t.URL, limiter: rate.NewLimiter(rate.Limit(p.opts.TenantQPS), p.opts.TenantBurst)}
		p.gates[id] = gate
	}
	logon := p.passwordLogonLocked(t, id)
	st, ok := p.states[key]
	if !ok {
		p.generation++
		st = &tenantState{gate: gate, maxPages: p.opts.MaxPages, generation: p.generation, limiters: map[rateLimit]*rate.Limiter{},
			namespaced: t.Namespace != ""}
		p.states[key] = st
		if st.namespaced {
			p.namespacedStates++
		}
	}
	p.mu.Unlock()
	st.lastUsed.Store(now.UnixNano())

	st.mu.Lock()
	defer st.mu.Unlock()
	if st.http == nil {
		// Circuits are kept per credentials: new ones start closed, and a
		// rejection of other ones is kept should they come back.
		hc, err := p.httpClient(t, st, p.opts.Breakers.Guard(breakerKey(t, d), t.URL), logon)
		if err != nil {
			return nil, err
		}
		st.http = hc
	}
	return newClient(t, st)
}

// roomLocked tells whether a client of t may be made: the platform's always,
// a namespaced config's if it adds no state or user beyond MaxNamespaced,
// after a sweep if need be. The caller holds p.mu.
func (p *Pool) roomLocked(t Tenant, id, key string, now time.Time) bool {
	if t.Namespace == "" {
		return true
	}
	full := func() bool {
		_, known := p.states[key]
		_, knownUser := p.users[userKeyOf(t, id)]
		return (!known && p.namespacedStates >= p.opts.MaxNamespaced) ||
			(t.Username != "" && t.Password != "" && !knownUser && p.namespacedUsers >= p.opts.MaxNamespaced)
	}
	if !full() {
		return true
	}
	p.sweepLocked(now, true)
	return !full()
}

// sweepLocked drops the state of credentials no client asked for within
// IdleAfter (a ProviderConfig's old password), and what only they used: at
// most once a minute, or, when full, every few seconds (at most every
// IdleAfter). The caller holds p.mu.
func (p *Pool) sweepLocked(now time.Time, full bool) {
	if since := now.Sub(p.lastSweep); since < time.Minute && (!full || since < min(fullSweepEvery, p.opts.IdleAfter)) {
		return
	}
	p.lastSweep = now
	inUse := map[*tenantGate]bool{}
	for k, st := range p.states {
		if now.Sub(time.Unix(0, st.lastUsed.Load())) > p.opts.IdleAfter {
			delete(p.states, k)
			if st.namespaced {
				p.namespacedStates--
			}
			st.mu.Lock()
			if st.http != nil {
				st.http.CloseIdleConnections()
			}
			st.mu.Unlock()
			continue
		}
		inUse[st.gate] = true
	}
	for k, g := range p.gates {
		if !inUse[g] && !g.paused(now) {
			delete(p.gates, k)
		}
	}
	for k, u := range p.users {
		if u.idle(now, p.opts.IdleAfter) {
			delete(p.users, k)
			if !u.platform {
				p.namespacedUsers--
			}
		}
	}
}

// fullSweepEvery spaces the sweeps a full pool asks for: each walks every entry.
const fullSweepEvery = 5 * time.Second

// breakerKey names a tenant's circuits and state: its URL and credentials.
func breakerKey(t Tenant, digest string) string { return t.URL + "#" + digest }

func (p *Pool) httpClient(t Tenant, st *tenantState, guard breaker.Guard, logon *passwordLogon) (*http.Client, error) {
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
		Transport: &transport{next: base, gate: st.gate, guard: guard, metrics: p.opts.Metrics, logon: logon, policy: retryPolicy{
			attempts: p.opts.Attempts, baseBackoff: p.opts.BaseBackoff, maxBackoff: p.opts.MaxBackoff, timeout: p.opts.Timeout,
		}},
		// IAS answers creation with a relative Location; never follow redirects.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}
