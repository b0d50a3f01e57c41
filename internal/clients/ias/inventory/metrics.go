package inventory

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics of the tenants' listings.
type Metrics struct {
	// listings times listings of all of a tenant's apps, start to end.
	listings prometheus.Histogram
	// firstListingWaits counts resources waiting for a first listing.
	firstListingWaits prometheus.Gauge
	// namespaces is the budget whose held bytes the namespaced-inventory
	// gauge reports; set by New.
	namespaces atomic.Pointer[Budget]
}

// NewMetrics creates the listing metrics and registers them with reg, if any.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		listings: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "eventing_auth_ias_listing_duration_seconds",
			Help:    "How long listing all of a tenant's applications took, its pages one after the other; drift in IAS is found within the poll plus --ias-inventory-age plus this.",
			Buckets: prometheus.ExponentialBuckets(0.1, 2, 13),
		}),
		firstListingWaits: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "eventing_auth_ias_first_listing_waiting",
			Help: "IASApplications whose first reconcile after the provider started waits for their tenant's listing to show their app.",
		}),
	}
	namespaced := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "eventing_auth_ias_namespaced_inventory_bytes",
		Help: "Bytes the app listings of namespaces' ProviderConfigs hold together, a refresh's new copy included; bounded by their shared budget (16 MiB), the platform's listings not counted.",
	}, func() float64 {
		if b := m.namespaces.Load(); b != nil {
			return float64(b.Held())
		}
		return 0
	})
	if reg != nil {
		reg.MustRegister(m.listings, m.firstListingWaits, namespaced)
	}
	return m
}
