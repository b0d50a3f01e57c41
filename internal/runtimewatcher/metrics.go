package runtimewatcher

import "github.com/prometheus/client_golang/prometheus"

// Reasons an event is dropped, the values of the reason label.
const (
	DropMethod         = "method"
	DropOversized      = "oversized"
	DropNoCertificate  = "no_certificate"
	DropBadCertificate = "bad_certificate"
	DropUntrusted      = "untrusted_certificate"
	DropMalformedBody  = "malformed_body"
	DropUnknownRuntime = "unknown_runtime"
	DropWrongObject    = "wrong_object"
	DropFlood          = "flood"
	DropForgedRelay    = "forged_relay"
)

// Triggers of a repair, the values of the trigger label: an event from the
// runtime-watcher, or anything else (a poll, most often).
const (
	TriggerEvent = "event"
	TriggerPoll  = "poll"
)

// Metrics of the listener and of the repairs it brings.
type Metrics struct {
	received  prometheus.Counter
	dropped   *prometheus.CounterVec
	lastEvent prometheus.Gauge
	repairs   *prometheus.CounterVec
	fights    prometheus.Counter
	writes    prometheus.Counter
	echoes    prometheus.Counter
	handed    *prometheus.CounterVec
	// clientCAMissing is 1 while --runtime-watcher-client-ca names a file
	// that does not exist.
	clientCAMissing prometheus.Gauge
}

// NewMetrics registers the metrics with r. Every series exists from the start,
// at 0, so that an alert can tell "none yet" from "not exported".
func NewMetrics(r prometheus.Registerer) *Metrics {
	m := &Metrics{
		received: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "eventing_auth_watcher_events_received_total",
			Help: "Requests the runtime-watcher listener received, whether enqueued or dropped.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eventing_auth_watcher_events_dropped_total",
			Help: "Requests the runtime-watcher listener answered with an error and did not enqueue, by reason.",
		}, []string{"reason"}),
		lastEvent: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "eventing_auth_watcher_last_event_timestamp_seconds",
			Help: "When the runtime-watcher listener last enqueued an event (Unix time).",
		}),
		repairs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eventing_auth_runtime_secret_repairs_total",
			Help: "Runtime Secrets changed or deleted by someone else and put back, by what found the change: an event from the runtime-watcher, or a poll.",
		}, []string{"trigger"}),
		fights: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "eventing_auth_runtime_secret_fights_total",
			Help: "Times a runtime's Secret was changed by someone else so often that its repairs now wait, growing.",
		}),
		writes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "eventing_auth_runtime_secret_writes_total",
			Help: "Secrets the provider created, updated or deleted on runtimes; each comes back as an event (an echo) while the runtime-watcher works.",
		}),
		echoes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "eventing_auth_watcher_echoes_total",
			Help: "Events of the provider's own writes on runtimes, which arrive while the write is in flight, taken without a reconcile.",
		}),
		handed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eventing_auth_watcher_events_handed_total",
			Help: "Events a standby replica took: forwarded to the leader, held while no leader could be reached, replayed once it became the leader, or dropped as the oldest held.",
		}, []string{"how"}),
		clientCAMissing: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "eventing_auth_watcher_client_ca_missing",
			Help: "1 while the file of --runtime-watcher-client-ca does not exist: every runtime-watcher event is refused and runtimes are repaired only by polls.",
		}),
	}
	for _, how := range []string{HandedForwarded, HandedHeld, HandedReplayed, HandedDropped} {
		m.handed.WithLabelValues(how)
	}
	for _, reason := range []string{DropMethod, DropOversized, DropNoCertificate, DropBadCertificate, DropUntrusted, DropMalformedBody, DropUnknownRuntime, DropWrongObject, DropFlood} {
		m.dropped.WithLabelValues(reason)
	}
	for _, trigger := range []string{TriggerEvent, TriggerPoll} {
		m.repairs.WithLabelValues(trigger)
	}
	r.MustRegister(m.received, m.dropped, m.lastEvent, m.repairs, m.fights, m.writes, m.echoes, m.handed, m.clientCAMissing)
	return m
}
