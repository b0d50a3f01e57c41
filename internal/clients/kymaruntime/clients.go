package kymaruntime

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/lru"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/kube"
)

// Defaults of the client cache.
const (
	// DefaultCacheSize keeps the clients of the runtimes reconciled in the last
	// minutes: a new runtime's reconciles follow each other within seconds, its
	// deletion or a repair may come minutes later, and a poll at thousands of
	// runtimes comes after every other runtime's, when no size short of all of
	// them would still hold its client. A client built again parses its
	// kubeconfig and TLS material again, a visible share of the CPU of a
	// deletion. Every client that has made its calls holds memory
	// (BenchmarkClientsHeld, its TLS sessions counted), and at thousands of
	// runtimes polls keep the cache full, so its size bounds that memory; this
	// size keeps 10,000 runtimes within the memory budget (BenchmarkSteady;
	// docs/performance.md).
	DefaultCacheSize = 1000
	// DefaultSessionCacheSize keeps the TLS sessions of the runtimes
	// connected to last, beyond the clients kept: a runtime's next
	// connection after its client was evicted (its deletion minutes after
	// its creation, a repair) resumes its session instead of verifying the
	// runtime's certificate chain and signature again. A session is its
	// ticket and the runtime's certificates, a few KB.
	DefaultSessionCacheSize = 1000
	DefaultTimeout          = 10 * time.Second
	// DefaultIdleTimeout closes a runtime connection right after a reconcile's
	// calls, which follow each other within milliseconds; the next reconcile of
	// that runtime comes seconds or minutes later. Each open connection holds
	// TLS and HTTP buffers, so connections kept open for seconds at hundreds of
	// reconciles per second would be the provider's largest memory.
	DefaultIdleTimeout = time.Second
	// DefaultConnectTimeout bounds the TCP connect and the TLS handshake: a
	// healthy API server completes both in well under a second, while a runtime
	// that accepts connections and never answers would otherwise hold a worker
	// for the whole call timeout.
	DefaultConnectTimeout = 3 * time.Second
)

// Options of the client cache.
type Options struct {
	// Size is the most clients kept at once; default DefaultCacheSize.
	Size int
	// Sessions is the most TLS sessions kept at once, of all runtimes;
	// default DefaultSessionCacheSize.
	Sessions int
	// Timeout bounds every call to a runtime; default DefaultTimeout.
	Timeout time.Duration
	// IdleTimeout closes a runtime connection unused this long; default
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// ConnectTimeout bounds connecting and the TLS handshake; default
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Breakers hold a circuit per runtime (kubeconfig); default
	// NewBreakers(nil, "").
	Breakers *breaker.Set
	// Metrics, if set, observe the cache.
	Metrics *Metrics
	// PlainHTTPLoopback takes kubeconfigs with plain http to a loopback
	// host: for tests only.
	PlainHTTPLoopback bool
}

// Clients hands out core/v1 clients for runtimes, cached per kubeconfig digest in
// a bounded LRU. A changed kubeconfig has a new digest and so a new client; the
// old one ages out. Clients do no discovery: they speak core/v1 only.
type Clients struct {
	timeout  time.Duration
	idle     time.Duration
	connect  time.Duration
	breakers *breaker.Set
	metrics  *Metrics
	cache    *lru.Cache
	// plainHTTPLoopback: Options.PlainHTTPLoopback.
	plainHTTPLoopback bool
	sessions          tls.ClientSessionCache

	// Counters are atomic: the LRU calls its eviction function under its own
	// lock, so taking another lock there could deadlock against For.
	built, evicted, peak atomic.Int64
}

// Stats of a client cache.
type Stats struct {
	// Len is the number of clients held now; Peak the most ever held.
	Len, Peak int
	// Built counts clients made, Evicted those dropped to stay within the size.
	Built, Evicted int
}

// cached is one runtime's client and the HTTP client whose connections it
// owns, and the API server's host.
type cached struct {
	core corev1client.CoreV1Interface
	http *http.Client
	host string
}

// NewClients returns an empty client cache.
func NewClients(o Options) *Clients {
	if o.Size <= 0 {
		o.Size = DefaultCacheSize
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.Sessions <= 0 {
		o.Sessions = DefaultSessionCacheSize
	}
	if o.Breakers == nil {
		o.Breakers = NewBreakers(nil, "")
	}
	c := &Clients{timeout: o.Timeout, idle: o.IdleTimeout, connect: o.ConnectTimeout, breakers: o.Breakers, metrics: o.Metrics, plainHTTPLoopback: o.PlainHTTPLoopback,
		sessions: tls.NewLRUClientSessionCache(o.Sessions)}
	c.cache = lru.NewWithEvictionFunc(o.Size, func(_ lru.Key, v any) {
		// Each client has its own transport (see For), so closing its idle
		// connections frees what it held. http.Client's own
		// CloseIdleConnections stops at client-go's wrappers.
		utilnet.CloseIdleConnectionsFor(v.(cached).http.Transport)
		c.evicted.Add(1)
		c.metrics.evicted()
	})
	return c
}

// For returns a client for the runtime the kubeconfig points at. Errors wrap
// ErrRefused when the kubeconfig is not acceptable.
func (c *Clients) For(kubeconfig []byte) (corev1client.CoreV1Interface, error) {
	key := digest(kubeconfig)
	if v, ok := c.cache.Get(key); ok {
		return v.(cached).core, nil
	}
	rc, err := RESTConfig(kubeconfig, c.plainHTTPLoopback)
	if err != nil {
		return nil, err
	}
	// The call timeout is the breaker's transport's (see guard), which tells a
	// runtime that timed out from a caller that gave up.
	rc.Timeout = 0
	rc.Dial = (&net.Dialer{Timeout: c.connect, KeepAlive: 30 * time.Second}).DialContext
	// HTTP/1.1: a reconcile makes one to three calls in sequence, so HTTP/2's
	// multiplexing brings nothing, while its per-connection buffers, header
	// tables and reader goroutine cost memory at every open connection.
	rc.NextProtos = []string{"http/1.1"}
	// Only Secrets, core objects, are read and written.
	kube.PreferProtobuf(rc)
	rc.UserAgent = "provider-eventing-auth"
	// No token bucket of client-go's: a runtime's calls are paced by its
	// reconciles and its circuit, and a bucket would hold a worker before
	// the circuit sees the call.
	rc.QPS = -1
	// A proxy function makes client-go's transport uncacheable, so the transport
	// is this client's alone: client-go's global TLS cache would otherwise keep
	// one transport per runtime forever, whatever size this cache has.
	rc.Proxy = http.ProxyFromEnvironment
	guarded := c.breakers.Guard(key, rc.Host)
	rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return &guard{next: c.configureTransport(rt, key), call: guarded, timeout: c.timeout}
	}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		// TLS errors name what failed to parse, never the data.
		return nil, refused("cannot build a client from its TLS settings: %v", err)
	}
	// The guard turns every redirect into a failure already; this keeps it so
	// should the transport change.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return breaker.ErrRedirect }
	core, err := corev1client.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, refused("cannot build a client from it")
	}
	c.cache.Add(key, cached{core: core, http: hc, host: rc.Host})
	c.built.Add(1)
	n := c.cache.Len()
	for {
		p := c.peak.Load()
		if int64(n) <= p || c.peak.CompareAndSwap(p, int64(n)) {
			break
		}
	}
	c.metrics.set(n)
	return core, nil
}

// Recall opens the circuit of the runtime the kubeconfig points at as f
// records, if f is of that runtime and its circuit is not known yet (see
// breaker.Set.Recall). The circuits outlive the cache: a client evicted by
// other runtimes' since it was handed out still finds its circuit recalled,
// so the host comes from the kubeconfig when the cache no longer has it.
func (c *Clients) Recall(ctx context.Context, kubeconfig []byte, f breaker.Failure) {
	key := digest(kubeconfig)
	var host string
	if v, ok := c.cache.Get(key); ok {
		host = v.(cached).host
	} else if rc, err := RESTConfig(kubeconfig, c.plainHTTPLoopback); err == nil {
		host = rc.Host
	} else {
		return
	}
	c.breakers.Recall(ctx, key, host, f)
}

// digest identifies a kubeconfig without revealing it.
func digest(kubeconfig []byte) string { return fmt.Sprintf("%x", sha256.Sum256(kubeconfig)) }

// tune shortens the idle timeout of the client's own transport (see
// DefaultIdleTimeout), bounds its TLS handshake and lets it resume TLS
// sessions; client-go hands WrapTransport that transport first.
//
// Closing idle connections early means a runtime's next reconcile connects
// again; a resumed session skips the parsing and verifying of the runtime's
// certificate chain and signature, and the signing with a client
// certificate. The sessions are kept in the cache shared by all clients,
// scoped by the kubeconfig's digest, so that they outlive an evicted client
// and are resumed only with the credentials that made them.
func (c *Clients) configureTransport(rt http.RoundTripper, digest string) http.RoundTripper {
	if t, ok := rt.(*http.Transport); ok {
		t.IdleConnTimeout = c.idle
		t.TLSHandshakeTimeout = c.connect
		if t.TLSClientConfig != nil && t.TLSClientConfig.ClientSessionCache == nil {
			t.TLSClientConfig.ClientSessionCache = scopedSessions{shared: c.sessions, scope: digest}
		}
	}
	return rt
}

// scopedSessions is one kubeconfig's part of a shared TLS session cache.
type scopedSessions struct {
	shared tls.ClientSessionCache
	scope  string
}

func (s scopedSessions) Get(key string) (*tls.ClientSessionState, bool) {
	return s.shared.Get(s.scope + "/" + key)
}

func (s scopedSessions) Put(key string, cs *tls.ClientSessionState) {
	s.shared.Put(s.scope+"/"+key, cs)
}

// Stats returns the cache's figures.
func (c *Clients) Stats() Stats {
	return Stats{Len: c.cache.Len(), Peak: int(c.peak.Load()), Built: int(c.built.Load()), Evicted: int(c.evicted.Load())}
}

// Metrics of the client cache.
type Metrics struct {
	clients   prometheus.Gauge
	evictions prometheus.Counter
}

// NewMetrics creates the cache metrics and registers them with reg, if any.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		clients: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "eventing_auth_runtime_clients",
			Help: "Runtime clients held in the cache.",
		}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "eventing_auth_runtime_client_evictions_total",
			Help: "Runtime clients dropped from the cache to stay within its size.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.clients, m.evictions)
	}
	return m
}

func (m *Metrics) set(n int) {
	if m != nil {
		m.clients.Set(float64(n))
	}
}

func (m *Metrics) evicted() {
	if m != nil {
		m.evictions.Inc()
	}
}
