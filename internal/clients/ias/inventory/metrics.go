package inventory

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics of the tenants' listings.
type Metrics struct {
	// listings times listings of all of a tenant's apps, start to end.
	listings prometheus.Histogram
	// firstListingWaits counts resources waiting for a first listing.
	firstListingWaits prometheus.Gauge
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
	if reg != nil {
		reg.MustRegister(m.listings, m.firstListingWaits)
	}
	return m
}
