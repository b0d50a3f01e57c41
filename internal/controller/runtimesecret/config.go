package runtimesecret

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Config is what the RuntimeSecret controller is set up with beyond what all
// controllers share; package provider builds it from the settings.
type Config struct {
	// Runtimes hands out clients of the runtimes (kymaruntime.Clients).
	Runtimes RuntimeClients
	// UnreachableDeletion is how long deleting a RuntimeSecret waits for a
	// runtime that does not answer before it completes without it.
	UnreachableDeletion time.Duration
	// Watcher is the runtime-watcher listener, which finds the RuntimeSecrets
	// of its events with Targets; nil: off.
	Watcher Watcher
	// Events is the listener's events, a source of the controller; nil: none.
	Events source.Source
}

// Defaulted fills in what is unset.
func (c Config) Defaulted() Config {
	if c.UnreachableDeletion <= 0 {
		c.UnreachableDeletion = DefaultUnreachableDeletion
	}
	if c.Watcher == nil {
		c.Watcher = NoWatcher{}
	}
	return c
}
