package kymabridge

import "time"

// Config is what the kyma bridge is set up with; package provider derives
// it from the settings.
type Config struct {
	// Enabled turns the bridge on (--kyma-bridge).
	Enabled bool
	// Resync re-applies each EventingAuth this often, so one deleted by hand
	// comes back; the poll interval.
	Resync time.Duration
	// CompositePoll is how often Crossplane core re-runs each EventingAuth's
	// composition with nothing changed (kinds.XRPollInterval if zero).
	CompositePoll time.Duration
	// Workers reconcile Kyma CRs concurrently; the provider's
	// --max-reconcile-rate.
	Workers int
}
