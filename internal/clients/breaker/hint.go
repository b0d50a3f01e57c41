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
	// answerDue: the resource waits for a first contact's answer, not for a
	// failing target: it is in the middle of a change, not of a routine wait.
	answerDue bool
}

type hintKey struct{}

// A RetryHint is when a reconcile's failing target may be tried again (zero
// if no call failed so), and whether the reconcile only waits for a first
// contact's answer.
type RetryHint struct {
	At        time.Time
	AnswerDue bool
}

// WithRetryHint returns a context whose calls report when a failing target may
// be tried again, and a function that reads it.
func WithRetryHint(ctx context.Context) (context.Context, func() RetryHint) {
	h := &hint{}
	return context.WithValue(ctx, hintKey{}, h), func() RetryHint {
		h.mu.Lock()
		defer h.mu.Unlock()
		return RetryHint{At: h.at, AnswerDue: h.answerDue}
	}
}

// hintAt records at in ctx's hint; the latest target a reconcile waits for wins.
func hintAt(ctx context.Context, at time.Time) {
	hintWith(ctx, at, false)
}

// RetryAt records in ctx's hint that the reconcile waits for something due at
// at: the resource comes back then, as for a failing target, not at the
// workqueue's backoff, which after a few failures in a row would overshoot
// the wait by far.
func RetryAt(ctx context.Context, at time.Time) {
	hintAt(ctx, at)
}

// hintAnswerDue records at, when a first contact's answer is due, in ctx's hint.
func hintAnswerDue(ctx context.Context, at time.Time) {
	hintWith(ctx, at, true)
}

func hintWith(ctx context.Context, at time.Time, answerDue bool) {
	h, ok := ctx.Value(hintKey{}).(*hint)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if at.After(h.at) {
		h.at, h.answerDue = at, answerDue
	}
}
