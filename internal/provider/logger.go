package provider

import (
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/go-logr/logr"
)

// newReconcilerLogger is the logger crossplane-runtime's reconcilers get:
// one whose WithValues only collects the values until a line is logged.
// crossplane-runtime's managed reconciler adds values three times a
// reconcile and logs at debug level only, while zap encodes values as soon
// as they are added: at the default level that was 2–3% of the provider's
// CPU for lines never written.
func newReconcilerLogger(l logr.Logger) logging.Logger {
	return lazyLogger{base: logging.NewLogrLogger(l), debug: l.V(1).Enabled()}
}

type lazyLogger struct {
	base  logging.Logger
	debug bool
	kv    []any
}

func (l lazyLogger) Info(msg string, kv ...any) { l.withValues().Info(msg, kv...) }

func (l lazyLogger) Debug(msg string, kv ...any) {
	if l.debug {
		l.withValues().Debug(msg, kv...)
	}
}

func (l lazyLogger) WithValues(kv ...any) logging.Logger {
	// Clipped, so that two loggers made from this one never share an append.
	return lazyLogger{base: l.base, debug: l.debug, kv: append(slices.Clip(l.kv), kv...)}
}

// withValues is the logger with the collected values added.
func (l lazyLogger) withValues() logging.Logger {
	if len(l.kv) == 0 {
		return l.base
	}
	return l.base.WithValues(l.kv...)
}
