package kymabridge

import "time"

// Config is what the kyma bridge is set up with; main defaults it once
// (Defaulted).
type Config struct {
	// Enabled turns the bridge on (--kyma-bridge).
	Enabled bool
	// Resync re-applies each EventingAuth this often, so one deleted by hand
	// comes back; the poll interval.
	Resync time.Duration
	// Retry is the wait after the EventingAuth definition was found missing; a
	// tenth of the poll interval, at least a second.
	Retry time.Duration
	// Workers reconcile Kyma CRs concurrently; the provider's
	// --max-reconcile-rate.
	Workers int
}

// Defaulted derives what is unset from the poll interval and the workers of
// every controller.
func (c Config) Defaulted(poll time.Duration, workers int) Config {
	if c.Resync <= 0 {
		c.Resync = poll
	}
	if c.Retry <= 0 {
		c.Retry = max(poll/10, time.Second)
	}
	if c.Workers <= 0 {
		c.Workers = max(workers, 1)
	}
	return c
}
