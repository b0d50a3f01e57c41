package ias

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics of the calls to IAS, one series per operation and status code.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	waits    *prometheus.HistogramVec
	// failedLogons counts 401 answers per tenant: IAS locks a user after a few.
	failedLogons *prometheus.CounterVec
	// lastSuccess is, per tenant, when IAS last answered a call as expected.
	lastSuccess *prometheus.GaugeVec
}

// NewMetrics creates the IAS client metrics and registers them with reg, if any.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eventing_auth_ias_requests_total",
			Help: "Requests sent to IAS, by operation and HTTP status code (\"error\" when no answer came).",
		}, []string{"operation", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "eventing_auth_ias_request_duration_seconds",
			Help:    "Latency of requests sent to IAS, by operation.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}, []string{"operation"}),
		waits: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "eventing_auth_ias_rate_limit_wait_seconds",
			Help:    "Time requests waited for the tenant's token bucket or a 429's Retry-After.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"tenant"}),
		failedLogons: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eventing_auth_ias_failed_logons_total",
			Help: "Answers 401 from IAS (failed logons of the ProviderConfig's credentials), by tenant.",
		}, []string{"tenant"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "eventing_auth_ias_last_success_timestamp_seconds",
			Help: "When IAS last answered a call with a 2xx or an expected 404, by tenant (Unix seconds); time() minus it is the time since.",
		}, []string{"tenant"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.waits, m.failedLogons, m.lastSuccess)
	}
	return m
}
