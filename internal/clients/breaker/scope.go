package breaker

import (
	"context"
	"sync"

	"github.com/failsafe-go/failsafe-go/bulkhead"
)

// A scope is who a call is made for: the namespace of the resource that
// makes it. First contacts that go on without a worker hold a permit each
// (see firstcontact.go); the platform's scope (Options.PlatformScope) has
// permits of its own, and every other scope holds at most
// Options.ScopeDetachedCalls of the ones they share, so that a namespace of a
// few hundred slow servers holds neither the platform's nor all the others'.
type scopeKey struct{}

// WithScope makes the calls under ctx calls for scope.
func WithScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope)
}

func scopeFrom(ctx context.Context) string {
	s, _ := ctx.Value(scopeKey{}).(string)
	return s
}

// detachedPermits are the permits of first contacts without a worker.
type detachedPermits struct {
	platformScope string
	platform      bulkhead.Bulkhead[any]
	shared        bulkhead.Bulkhead[any]
	perScope      int

	// mu guards held, the shared permits each scope holds. Its own: callers
	// hold a target's mu, which the Set's mu is taken before.
	mu   sync.Mutex
	held map[string]int
}

func newDetachedPermits(o Options) *detachedPermits {
	return &detachedPermits{platformScope: o.PlatformScope, platform: bulkhead.New[any](uint(o.DetachedCalls)),
		shared: bulkhead.New[any](uint(o.DetachedCalls)), perScope: o.ScopeDetachedCalls, held: map[string]int{}}
}

// acquireDetached takes a permit for a first contact of scope, if one is free.
func (s *Set) acquireDetached(scope string) (release func(), ok bool) {
	d := s.detached
	if d.platformScope != "" && scope == d.platformScope {
		if !d.platform.TryAcquirePermit() {
			return nil, false
		}
		return d.platform.ReleasePermit, true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.held[scope] >= d.perScope || !d.shared.TryAcquirePermit() {
		return nil, false
	}
	d.held[scope]++
	return func() {
		d.mu.Lock()
		if d.held[scope]--; d.held[scope] <= 0 {
			delete(d.held, scope)
		}
		d.mu.Unlock()
		d.shared.ReleasePermit()
	}, true
}
