package runtimesecret

import (
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
)

// Config is what the RuntimeSecret controller is set up with beyond what all
// controllers share; package provider builds it from the settings.
type Config struct {
	// Runtimes hands out clients of the runtimes (kymaruntime.Clients).
	Runtimes RuntimeClients
	// UnreachableDeletion is how long deleting a RuntimeSecret waits for a
	// runtime that does not answer before it completes without it.
	UnreachableDeletion time.Duration
	// Watcher is the runtime-watcher listener, a source of the controller
	// that finds the RuntimeSecrets with Targets; nil: off.
	Watcher *runtimewatcher.Listener
}

// Defaulted fills in what is unset.
func (c Config) Defaulted() Config {
	if c.UnreachableDeletion <= 0 {
		c.UnreachableDeletion = DefaultUnreachableDeletion
	}
	return c
}
