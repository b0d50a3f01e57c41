package breaker

import (
	"context"
	"errors"
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

// TestScopedTargetsAreBounded: the circuits kept for runtimes outside the
// platform's namespace are bounded together; beyond the bound a call to a new
// runtime is refused with ErrTooManyTargets and a recalled failure is not
// kept, while the platform's runtimes and the runtimes already known go on.
func TestScopedTargetsAreBounded(t *testing.T) {
	set := NewSet(Options{Kind: Runtime, BaseDelay: time.Second, MaxDelay: 2 * time.Second, PlatformScope: "kcp-system", MaxScopedTargets: 3})
	answers := read(func() (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	})
	call := func(scope, key string) error {
		_, err := set.Guard(key, key)(WithScope(context.Background(), scope), answers)
		return err
	}
	cases := []struct {
		reason  string
		scope   string
		key     string
		wantErr error
	}{
		{reason: "a namespace's runtimes are kept up to the bound", scope: "tenant-b", key: "b-1"},
		{scope: "tenant-b", key: "b-2"},
		{reason: "the bound is shared by every namespace", scope: "team-a", key: "a-1"},
		{reason: "beyond it, a new runtime's call is refused", scope: "tenant-b", key: "b-3", wantErr: ErrTooManyTargets},
		{reason: "for every namespace", scope: "team-a", key: "a-2", wantErr: ErrTooManyTargets},
		{reason: "a runtime already known goes on", scope: "tenant-b", key: "b-1"},
		{reason: "the platform's runtimes are not counted", scope: "kcp-system", key: "platform-1"},
		{scope: "kcp-system", key: "platform-2"},
	}
	for i, tc := range cases {
		if err := call(tc.scope, tc.key); !errors.Is(err, tc.wantErr) {
			t.Errorf("%d: %s\ncall of %s to %s: %v, want %v", i, tc.reason, tc.scope, tc.key, err, tc.wantErr)
		}
	}
	set.Recall(WithScope(context.Background(), "tenant-b"), "b-4", "b-4", Failure{Target: "b-4", Cause: "timeout", Next: time.Now().Add(time.Hour)})
	if _, ok := set.Find("b-4"); ok {
		t.Error("a namespace's failure beyond the bound was kept")
	}
}
