package provider

import (
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/go-logr/logr"
)

// newReconcilerLogger is the logger crossplane-runtime's reconcilers get,
// with values collected until a line is logged (lazyValues). crossplane-runtime's
// managed reconciler adds values three times a reconcile and logs at debug
// level only: at the default level, collecting them eagerly spends a visible
// share of the provider's CPU on lines never written.
func newReconcilerLogger(l logr.Logger) logging.Logger {
	return logging.NewLogrLogger(lazyValues(l))
}

// lazyValues is l with a WithValues that only collects the values until a
// line is written, when they are added to l's sink. zap encodes values as
// soon as they are added, and controller-runtime adds the controller's and
// the request's to its logger at every reconcile (and crossplane-runtime
// more), for lines that at the default level are never written.
func lazyValues(l logr.Logger) logr.Logger {
	base := l.GetSink()
	if base == nil {
		return l
	}
	if cd, ok := base.(logr.CallDepthLogSink); ok {
		// The lazy sink is one more frame between the caller and base.
		base = cd.WithCallDepth(1)
	}
	return l.WithSink(&lazySink{base: base})
}

// lazySink is a logr.LogSink that keeps the values added to it and hands them
// to base with each line.
type lazySink struct {
	base logr.LogSink
	kv   []any
}

// Init does nothing: base was initialised with the logger it came from.
func (s *lazySink) Init(logr.RuntimeInfo) {}

func (s *lazySink) Enabled(level int) bool { return s.base.Enabled(level) }

func (s *lazySink) Info(level int, msg string, kv ...any) { s.withValues().Info(level, msg, kv...) }

func (s *lazySink) Error(err error, msg string, kv ...any) { s.withValues().Error(err, msg, kv...) }

func (s *lazySink) WithValues(kv ...any) logr.LogSink {
	// Clipped, so that two sinks made from this one never share an append.
	return &lazySink{base: s.base, kv: append(slices.Clip(s.kv), kv...)}
}

func (s *lazySink) WithName(name string) logr.LogSink {
	return &lazySink{base: s.base.WithName(name), kv: s.kv}
}

// withValues is base with the collected values added.
func (s *lazySink) withValues() logr.LogSink {
	if len(s.kv) == 0 {
		return s.base
	}
	return s.base.WithValues(s.kv...)
}
