// Package secretmetrics exports the state of the credentials the provider
// handles: the client secrets it publishes (how long they stay valid,
// rotations, the retirement of older secrets) and the client certificates it
// logs in to IAS with. IAS sends no expiry notice for either; these metrics are
// how a platform team sees that none expires unnoticed.
package secretmetrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Published is one application's published client secret as its status
// records it.
type Published struct {
	// ValidTo is when it expires; nil if never.
	ValidTo *time.Time
	// RotationDue tells that it is within the application's rotateBefore.
	RotationDue bool
	// Retiring are the older secrets kept until the runtimes took this one up.
	Retiring []Retiring
}

// Retiring is an older secret waiting to be deleted.
type Retiring struct {
	// Since is when its successor was published: the retirement's start.
	Since time.Time
	// ForRuntimes tells that runtimes, not only time, hold its deletion back.
	ForRuntimes bool
}

// Source lists the published secrets; it reads the manager's cache.
type Source func(context.Context) ([]Published, error)

// expiryBuckets are the upper bounds of the expires_in label: one series per
// bucket, never one per application.
var expiryBuckets = []struct {
	label string
	upTo  time.Duration
}{
	{"expired", 0},
	{"7d", 7 * 24 * time.Hour},
	{"14d", 14 * 24 * time.Hour},
	{"30d", 30 * 24 * time.Hour},
	{"90d", 90 * 24 * time.Hour},
}

// Metrics counts rotations as they happen and reads the rest from a Source
// at each scrape, so the figures always match the resources' status.
type Metrics struct {
	rotations *prometheus.CounterVec
	// certs is, per ProviderConfig logging in with a client certificate,
	// when that certificate expires and when a reconcile last reported it.
	// A ProviderConfig that no reconcile reports for CertificateForget (it
	// was deleted, or nothing uses it any more) loses its series, so the
	// series are as many as the ProviderConfigs in use.
	certs  map[string]reportedCert
	pruned time.Time

	certExpiry, secrets, overdue, retirements, oldest *prometheus.Desc

	mu     sync.Mutex
	source Source
	now    func() time.Time
}

// CertificateForget is how long the certificate expiry of a ProviderConfig
// that no reconcile reports stays exported: every resource that uses a
// ProviderConfig reports it at each of its polls, and the hourly secrets
// check is the longest a used one goes unreported.
const CertificateForget = 2 * time.Hour

type reportedCert struct{ notAfter, reported time.Time }

// New creates the metrics and registers them with reg, if any.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		rotations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eventing_auth_secret_rotations_total",
			Help: "Rotations of a client secret that was within rotateBefore, by result (succeeded, failed).",
		}, []string{"result"}),
		certExpiry: prometheus.NewDesc("eventing_auth_ias_client_certificate_expiry_timestamp_seconds",
			"When the client certificate a ProviderConfig logs in to IAS with expires (Unix seconds), by provider_config (Kind/[namespace/]name).",
			[]string{"provider_config"}, nil),
		certs: map[string]reportedCert{},
		secrets: prometheus.NewDesc("eventing_auth_client_secrets",
			"Published client secrets by the time left until they expire: expired, within 7d, 14d, 30d, 90d, later, or never.",
			[]string{"expires_in"}, nil),
		overdue: prometheus.NewDesc("eventing_auth_secret_rotations_overdue",
			"Published client secrets within their application's rotateBefore that are not rotated yet.", nil, nil),
		retirements: prometheus.NewDesc("eventing_auth_secret_retirements",
			"Older client secrets waiting to be deleted, by what they wait for (runtimes: some RuntimeSecret does not carry the successor yet; time: retireAfter).",
			[]string{"waiting_for"}, nil),
		oldest: prometheus.NewDesc("eventing_auth_secret_retirement_oldest_seconds",
			"Time since the oldest retirement began (its successor's publication), by what it waits for.",
			[]string{"waiting_for"}, nil),
		now: time.Now,
	}
	for _, r := range []string{"succeeded", "failed"} {
		m.rotations.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m)
	}
	return m
}

// ReadFrom sets where the published secrets are read; until it is called
// (the IASApplication controller starts once its CRD exists) only the rotation
// counters are exported.
func (m *Metrics) ReadFrom(s Source) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.source = s
}

// Rotated counts one rotation with its outcome.
func (m *Metrics) Rotated(err error) {
	if m == nil {
		return
	}
	result := "succeeded"
	if err != nil {
		result = "failed"
	}
	m.rotations.WithLabelValues(result).Inc()
}

// ClientCertificate records when the client certificate of ProviderConfig pc
// expires; nil: pc logs in with a password (its series goes).
func (m *Metrics) ClientCertificate(pc string, notAfter *time.Time) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if notAfter == nil {
		delete(m.certs, pc)
		return
	}
	now := m.now()
	m.certs[pc] = reportedCert{notAfter: *notAfter, reported: now}
	if now.Sub(m.pruned) > time.Minute {
		m.pruned = now
		m.forgetUnreportedLocked(now)
	}
}

// forgetUnreportedLocked drops the certificates no reconcile reported for
// CertificateForget; the scrapes prune too, this keeps the map bounded
// where nothing scrapes.
func (m *Metrics) forgetUnreportedLocked(now time.Time) {
	for pc, c := range m.certs {
		if now.Sub(c.reported) > CertificateForget {
			delete(m.certs, pc)
		}
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.rotations.Describe(ch)
	for _, d := range []*prometheus.Desc{m.certExpiry, m.secrets, m.overdue, m.retirements, m.oldest} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.rotations.Collect(ch)
	m.mu.Lock()
	source := m.source
	m.forgetUnreportedLocked(m.now())
	for pc, c := range m.certs {
		ch <- prometheus.MustNewConstMetric(m.certExpiry, prometheus.GaugeValue, float64(c.notAfter.Unix()), pc)
	}
	m.mu.Unlock()
	if source == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	published, err := source(ctx)
	if err != nil {
		// A failed read exports nothing rather than zeros that look healthy.
		return
	}
	s := m.summarise(published)
	for _, b := range append(expiryLabels(), "later", "never") {
		ch <- prometheus.MustNewConstMetric(m.secrets, prometheus.GaugeValue, float64(s.byExpiry[b]), b)
	}
	ch <- prometheus.MustNewConstMetric(m.overdue, prometheus.GaugeValue, float64(s.overdue))
	for _, w := range []string{"runtimes", "time"} {
		ch <- prometheus.MustNewConstMetric(m.retirements, prometheus.GaugeValue, float64(s.retiring[w]), w)
		ch <- prometheus.MustNewConstMetric(m.oldest, prometheus.GaugeValue, s.oldest[w].Seconds(), w)
	}
}

type summary struct {
	byExpiry map[string]int
	overdue  int
	retiring map[string]int
	oldest   map[string]time.Duration
}

func (m *Metrics) summarise(published []Published) summary {
	now := m.now()
	s := summary{byExpiry: map[string]int{}, retiring: map[string]int{}, oldest: map[string]time.Duration{}}
	for _, p := range published {
		s.byExpiry[expiresIn(p.ValidTo, now)]++
		if p.RotationDue {
			s.overdue++
		}
		for _, r := range p.Retiring {
			w := "time"
			if r.ForRuntimes {
				w = "runtimes"
			}
			s.retiring[w]++
			s.oldest[w] = max(s.oldest[w], now.Sub(r.Since))
		}
	}
	return s
}

func expiryLabels() []string {
	out := make([]string, 0, len(expiryBuckets))
	for _, b := range expiryBuckets {
		out = append(out, b.label)
	}
	return out
}

// expiresIn is the expires_in label of a secret valid until validTo.
func expiresIn(validTo *time.Time, now time.Time) string {
	if validTo == nil {
		return "never"
	}
	left := validTo.Sub(now)
	for _, b := range expiryBuckets {
		if left <= b.upTo {
			return b.label
		}
	}
	return "later"
}
