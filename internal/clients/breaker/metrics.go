package breaker

import "github.com/prometheus/client_golang/prometheus"

// Metrics of the breakers, by kind of target.
type Metrics struct {
	open        *prometheus.GaugeVec
	refused     *prometheus.CounterVec
	brokenCalls *prometheus.GaugeVec
	// firstContacts are the first contacts and probes (reads) in flight;
	// detached counts those left to finish without a worker.
	firstContacts *prometheus.GaugeVec
	detached      *prometheus.CounterVec
}

// NewMetrics creates the breaker metrics and registers them with reg, if any.
// One Metrics serves the Sets of every kind.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "eventing_auth_circuits_open",
			Help: "Targets (IAS tenants, runtime API servers) whose circuit is open or half-open: calls to them fail fast.",
		}, []string{"kind"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eventing_auth_calls_refused_total",
			Help: "Calls not made because their target is known to fail, or too many calls to failing targets were in flight.",
		}, []string{"kind"}),
		brokenCalls: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "eventing_auth_calls_to_failing_targets_in_flight",
			Help: "Controller workers held by calls to failing targets, and by first contacts and probes beyond their 100ms grace: at most 2 per kind.",
		}, []string{"kind"}),
		firstContacts: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "eventing_auth_first_contacts_in_flight",
			Help: "First contacts and probes (reads of targets of unknown health, or failing and due a probe) in flight, whether a worker waits on them or not.",
		}, []string{"kind"}),
		detached: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eventing_auth_first_contacts_detached_total",
			Help: "First contacts and probes left to finish without a worker: their answer only teaches the circuits, and the resource tries again when it is due.",
		}, []string{"kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.open, m.refused, m.brokenCalls, m.firstContacts, m.detached)
	}
	return m
}

// init exports the series of a kind at 0 from the start, so that a rate or an
// alert on them has a series before the first event.
func (m *Metrics) init(k Kind) {
	kind := string(k)
	m.open.WithLabelValues(kind)
	m.refused.WithLabelValues(kind)
	m.brokenCalls.WithLabelValues(kind)
	m.firstContacts.WithLabelValues(kind)
	m.detached.WithLabelValues(kind)
}
