package breaker

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestNoScopeHoldsTheOthersFirstContacts: a namespace whose 300 runtimes hang
// on their first contacts holds at most its share of the permits that go on
// without a worker; another namespace's first contacts still go out, and so
// do the platform's, which have permits of their own.
func TestNoScopeHoldsTheOthersFirstContacts(t *testing.T) {
	set := NewSet(Options{Kind: Runtime, BaseDelay: time.Second, MaxDelay: 2 * time.Second, BrokenCalls: 2, Fresh: time.Minute,
		DetachedCalls: 64, PlatformScope: "kcp-system"})
	release := make(chan struct{})
	defer close(release)
	var hanging atomic.Int32
	hangs := read(func() (*http.Response, error) {
		hanging.Add(1)
		<-release
		return nil, context.DeadlineExceeded
	})
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Go(func() {
			// A reconcile's context ends; the detached calls go on.
			ctx, cancel := context.WithTimeout(WithScope(context.Background(), "tenant-b"), 500*time.Millisecond)
			defer cancel()
			_, _ = set.Target("hostile-"+strconv.Itoa(i), "h").Do(ctx, hangs)
		})
	}
	wg.Wait()
	// The rest detached: at most 64/8.
	if n := hanging.Load(); n > 8 {
		t.Errorf("the hostile namespace has %d first contacts out, want at most 8", n)
	}
	answers := read(func() (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	})
	for _, scope := range []string{"kcp-system", "team-a"} {
		if _, err := set.Target(scope+"-runtime", "r").Do(WithScope(context.Background(), scope), answers); err != nil {
			t.Errorf("a first contact of %s beside the hostile namespace: %v", scope, err)
		}
	}
}
