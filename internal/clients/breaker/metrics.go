package breaker

import "github.com/prometheus/client_golang/prometheus"

// Metrics of the breakers, by kind of target.
type Metrics struct {
	open        *prometheus.GaugeVec
	refused     *prometheus.CounterVec
	brokenCalls *prometheus.GaugeVec
	// firstContactWorkers are workers waiting on first contacts beyond the
	// grace; firstContacts the detachable first contacts in flight; detached
	// counts those left to finish without a worker.
	firstContactWorkers *prometheus.GaugeVec
	firstContacts       *prometheus.GaugeVec
	detached            *prometheus.CounterVec
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
			Help: "Calls in flight to targets whose circuit is not closed (probes): each holds a controller worker.",
		}, []string{"kind"}),
		firstContactWorkers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "eventing_auth_first_contact_workers",
			Help: "Controller workers waiting on a first contact (a call to a target of unknown health) beyond its 100ms grace; at most the bulkhead's 2 per kind.",
		}, []string{"kind"}),
		firstContacts: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "eventing_auth_first_contacts_in_flight",
			Help: "First contacts (reads of targets of unknown health) in flight, whether a worker waits on them or not.",
		}, []string{"kind"}),
		detached: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eventing_auth_first_contacts_detached_total",
			Help: "First contacts left to finish without a worker: their answer only teaches the circuits, and the resource tries again a second later.",
		}, []string{"kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.open, m.refused, m.brokenCalls, m.firstContactWorkers, m.firstContacts, m.detached)
	}
	return m
}
