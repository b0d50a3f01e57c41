package runtime

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/lru"
)

// Defaults of the client cache.
const (
	// DefaultCacheSize keeps the clients of the runtimes reconciled in the last
	// seconds: a new runtime's reconciles follow each other within seconds, a
	// poll comes minutes later, when at thousands of runtimes no size short of
	// all of them would still hold its client. A client holds its parsed TLS
	// material (about 80 KiB).
	DefaultCacheSize = 100
	DefaultTimeout   = 10 * time.Second
	// DefaultIdleTimeout closes a runtime connection right after a reconcile's
	// calls, which follow each other within milliseconds; the next reconcile of
	// that runtime comes seconds or minutes later. Each open connection holds
	// about 150 KiB (TLS and HTTP buffers), so connections kept open for seconds
	// at hundreds of reconciles per second were the provider's largest memory.
	DefaultIdleTimeout = time.Second
)

// Options of the client cache.
type Options struct {
	// Size is the most clients kept at once; default DefaultCacheSize.
	Size int
	// Timeout bounds every call to a runtime; default DefaultTimeout.
	Timeout time.Duration
	// IdleTimeout closes a runtime connection unused this long; default
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Metrics, if set, observe the cache.
	Metrics *Metrics
}

// Clients hands out core/v1 clients for runtimes, cached per kubeconfig digest in
// a bounded LRU. A changed kubeconfig has a new digest and so a new client; the
// old one ages out. Clients do no discovery: they speak core/v1 only.
type Clients struct {
	timeout time.Duration
	idle    time.Duration
	metrics *Metrics
	cache   *lru.Cache

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

// cached is one runtime's client and the HTTP client whose connections it owns.
type cached struct {
	core corev1client.CoreV1Interface
	http *http.Client
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
	c := &Clients{timeout: o.Timeout, idle: o.IdleTimeout, metrics: o.Metrics}
	c.cache = lru.NewWithEvictionFunc(o.Size, func(_ lru.Key, v any) {
		// Each client has its own transport (see For), so closing its idle
		// connections frees what it held.
		v.(cached).http.CloseIdleConnections()
		c.evicted.Add(1)
		c.metrics.evicted()
	})
	return c
}

// For returns a client for the runtime the kubeconfig points at. Errors wrap
// ErrRefused when the kubeconfig is not acceptable.
func (c *Clients) For(kubeconfig []byte) (corev1client.CoreV1Interface, error) {
	key := fmt.Sprintf("%x", sha256.Sum256(kubeconfig))
	if v, ok := c.cache.Get(key); ok {
		return v.(cached).core, nil
	}
	rc, err := RESTConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.Timeout = c.timeout
	// HTTP/1.1: a reconcile makes one to three calls in sequence, so HTTP/2's
	// multiplexing brings nothing, while its per-connection buffers, header
	// tables and reader goroutine cost memory at every open connection.
	rc.NextProtos = []string{"http/1.1"}
	rc.UserAgent = "provider-eventing-auth"
	// A proxy function makes client-go's transport uncacheable, so the transport
	// is this client's alone: client-go's global TLS cache would otherwise keep
	// one transport per runtime forever, whatever size this cache has.
	rc.Proxy = http.ProxyFromEnvironment
	rc.WrapTransport = c.closeIdleSoon
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		// TLS errors name what failed to parse, never the data.
		return nil, refused("cannot build a client from its TLS settings: %v", err)
	}
	core, err := corev1client.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, refused("cannot build a client from it")
	}
	c.cache.Add(key, cached{core: core, http: hc})
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

// closeIdleSoon shortens the idle timeout of the client's own transport (see
// DefaultIdleTimeout); client-go hands WrapTransport that transport first.
func (c *Clients) closeIdleSoon(rt http.RoundTripper) http.RoundTripper {
	if t, ok := rt.(*http.Transport); ok {
		t.IdleConnTimeout = c.idle
	}
	return rt
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
