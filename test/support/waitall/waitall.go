// Package waitall is how the benches learn when each of many objects reached
// a state: it checks them all, a few at a time, until every one has, and says
// when each first did.
package waitall

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Pause is how long Until waits between rounds, given how many ids are still
// pending.
type Pause func(pending int) time.Duration

// Every pauses d between rounds.
func Every(d time.Duration) Pause { return func(int) time.Duration { return d } }

// Often pauses up to 100 ms, less with few ids pending (10 ms each), so that
// when few are watched a figure is the provider's, not the watcher's.
func Often(pending int) time.Duration {
	return min(100*time.Millisecond, time.Duration(pending)*10*time.Millisecond)
}

// Until checks done for every id not yet done, 16 at a time, a round, then
// pauses, until each has held once or limit passed. It returns when each first
// held and how many never did within limit.
func Until(ctx context.Context, ids []string, limit time.Duration, pause Pause, done func(context.Context, string) bool) (map[string]time.Time, int) {
	at := map[string]time.Time{}
	deadline := time.Now().Add(limit)
	for len(at) < len(ids) {
		if time.Now().After(deadline) {
			return at, len(ids) - len(at)
		}
		var pending []string
		for _, id := range ids {
			if _, ok := at[id]; !ok {
				pending = append(pending, id)
			}
		}
		var mu sync.Mutex
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(16)
		for _, id := range pending {
			g.Go(func() error {
				if done(gctx, id) {
					mu.Lock()
					at[id] = time.Now()
					mu.Unlock()
				}
				return nil
			})
		}
		_ = g.Wait()
		time.Sleep(pause(len(pending)))
	}
	return at, 0
}
