package breaker

import (
	"context"
	"sync"
	"time"
)

// A retry hint carries, from the calls a reconcile made back to the controller,
// when a failing target may be tried again, so that the resource is requeued
// for then instead of by the workqueue's own backoff.
type hint struct {
	mu sync.Mutex
	at time.Time
}

type hintKey struct{}

// WithRetryHint returns a context whose calls report when a failing target may
// be tried again, and a function that reads it: zero if no call failed so.
func WithRetryHint(ctx context.Context) (context.Context, func() time.Time) {
	h := &hint{}
	return context.WithValue(ctx, hintKey{}, h), func() time.Time {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.at
	}
}

// hintAt records at in ctx's hint; the latest target a reconcile waits for wins.
func hintAt(ctx context.Context, at time.Time) {
	h, ok := ctx.Value(hintKey{}).(*hint)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if at.After(h.at) {
		h.at = at
	}
}
