package reconciler

import (
	"context"
	"sync/atomic"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

// A change hint carries, from an external client's Create or Delete back to
// PollsLast, that the reconcile began a change of the external resource: the
// immediate requeue crossplane-runtime then asks for finishes that change
// (marks a created app Ready, removes a deleted one's finalizer). A requeue
// after a failure carries none: it stays with other work, so that a namespace
// whose resources keep failing cannot go ahead of the platform's.
type changeKey struct{}

// withChangeHint returns a context in which a Create or Delete that succeeds
// is recorded, and a function that tells whether one did.
func withChangeHint(ctx context.Context) (context.Context, func() bool) {
	begun := &atomic.Bool{}
	return context.WithValue(ctx, changeKey{}, begun), begun.Load
}

// changeBegun records in ctx's hint that the reconcile began a change.
func changeBegun(ctx context.Context) {
	if begun, ok := ctx.Value(changeKey{}).(*atomic.Bool); ok {
		begun.Store(true)
	}
}

// TellChanges wraps c so that a Create or a Delete of its clients that
// succeeds tells PollsLast that a change began.
func TellChanges[T resource.Managed](c managed.TypedExternalConnector[T]) managed.TypedExternalConnector[T] {
	return telling[T]{c}
}

type telling[T resource.Managed] struct {
	managed.TypedExternalConnector[T]
}

func (c telling[T]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	e, err := c.TypedExternalConnector.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	return tellingClient[T]{e}, nil
}

type tellingClient[T resource.Managed] struct {
	managed.TypedExternalClient[T]
}

func (e tellingClient[T]) Create(ctx context.Context, mg T) (managed.ExternalCreation, error) {
	c, err := e.TypedExternalClient.Create(ctx, mg)
	if err == nil {
		changeBegun(ctx)
	}
	return c, err
}

func (e tellingClient[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	d, err := e.TypedExternalClient.Delete(ctx, mg)
	if err == nil {
		changeBegun(ctx)
	}
	return d, err
}
