package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/waitall"
)

// BenchmarkScale takes the figures of the provider at scale in one run, in this order: a
// single runtime on an idle system, 200 runtimes at once, their deletion, 1,000
// runtimes at once, and new runtimes while those 1,000 poll. Each figure is
// printed as "BENCH <key> <value> bound <bound> ratio <value/bound>".
func BenchmarkScale(b *testing.B) {
	startProvider(b, "--poll="+benchPoll.String())
	for range b.N {
		ctx := context.Background()
		if os.Getenv("BENCH_ONLY_200") != "" {
			bringUp(ctx, b, "bringup_200", 200)
			continue
		}
		idle(ctx, b)
		ids := bringUp(ctx, b, "bringup_200", 200)
		teardown(ctx, b, "delete_200", ids)
		before := rssKiB()
		bringUp(ctx, b, "bringup_1000", 1000)
		newWhilePolling(ctx, b, 30)
		after := rssKiB()
		fmt.Printf("BENCH rss_mib_1200 %.1f\n", float64(after)/1024)
		fmt.Printf("BENCH rss_kib_per_runtime %.1f\n", float64(after-before)/1030)
	}
}

// rssKiB is the provider process's resident memory.
func rssKiB() int64 { return benchfig.UsageOf(provider.Process.Pid).RSS }

var seq int

func nextID(prefix string) string {
	seq++
	return idOf(prefix, seq)
}

// idOf is the ID nextID gives the n-th runtime, made with prefix.
func idOf(prefix string, n int) string {
	return fmt.Sprintf("%s-%05d", strings.ReplaceAll(prefix, "_", "-"), n)
}

// waitAll waits until done holds for every id, and returns when each first did.
func waitAll(ctx context.Context, b *testing.B, ids []string, limit time.Duration, done func(context.Context, string) bool) map[string]time.Time {
	return waitAllLogged(ctx, b, providerLog, ids, limit, done)
}

// waitAllLogged is waitAll of a process logging to log, whose end a failure
// shows.
func waitAllLogged(ctx context.Context, b *testing.B, log string, ids []string, limit time.Duration, done func(context.Context, string) bool) map[string]time.Time {
	at, missing := waitall.Until(ctx, ids, limit, waitall.Often, done)
	if missing > 0 {
		b.Fatalf("%d of %d not done after %s; log %s:\n%s", missing, len(ids), limit, filepath.Base(log), tail(log))
	}
	return at
}

func create(ctx context.Context, b *testing.B, ids []string) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for _, id := range ids {
		g.Go(func() error { return newRuntime(gctx, id) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// newRuntimesEvery creates n runtimes, one every interval, and returns how
// long each took to get its Secret; one that takes longer than limit fails.
func newRuntimesEvery(ctx context.Context, b *testing.B, prefix string, n int, every, limit time.Duration) []time.Duration {
	var (
		mu   sync.Mutex
		took []time.Duration
		wg   sync.WaitGroup
	)
	for range n {
		id := nextID(prefix)
		created := time.Now()
		create(ctx, b, []string{id})
		wg.Go(func() {
			at := waitAll(ctx, b, []string{id}, limit, hasSecret)
			mu.Lock()
			took = append(took, at[id].Sub(created))
			mu.Unlock()
		})
		time.Sleep(every)
	}
	wg.Wait()
	return took
}

// idle: one runtime at a time on an idle system, resource to runtime Secret.
func idle(ctx context.Context, b *testing.B) {
	var took []time.Duration
	for range 10 {
		id := nextID("idle")
		start := time.Now()
		create(ctx, b, []string{id})
		at := waitAll(ctx, b, []string{id}, time.Minute, hasSecret)
		took = append(took, at[id].Sub(start))
	}
	benchfig.Figure("single_runtime_p50_s", benchfig.Percentile(took, 0.5).Seconds(), 0.5)

	// A runtime deleted right after it was made: released at once, not after a
	// creation grace period.
	id := nextID("fresh")
	create(ctx, b, []string{id})
	waitAll(ctx, b, []string{id}, time.Minute, hasSecret)
	start := time.Now()
	teardownOne(ctx, b, id)
	benchfig.Figure("fresh_runtime_delete_s", time.Since(start).Seconds(), 5)
}

// bringUp creates n runtimes at once and waits for every runtime Secret.
func bringUp(ctx context.Context, b *testing.B, key string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = nextID(key)
	}
	calls0, throttled0 := iasCalls()
	creating0 := creationCalls()
	start := time.Now()
	create(ctx, b, ids)
	at := waitAll(ctx, b, ids, 15*time.Minute, hasSecret)
	elapsed := time.Since(start)
	calls, throttled := iasCalls()
	calls, throttled = calls-calls0, throttled-throttled0
	var took []time.Duration
	for _, t := range at {
		took = append(took, t.Sub(start))
	}
	bound := float64(calls) / tenantQPS
	benchfig.Figure(key+"_s", elapsed.Seconds(), 1.3*bound)
	fmt.Printf("BENCH %s_ias_bound_s %.3f\n", key, bound)
	fmt.Printf("BENCH %s_p50_s %.3f\n", key, benchfig.Percentile(took, 0.5).Seconds())
	// Calls that make runtimes (find, create app, create secret); the polls of
	// runtimes already Ready make up the rest of the calls.
	benchfig.Figure(key+"_ias_calls_per_new_runtime", float64(creationCalls()-creating0)/float64(n), 4)
	fmt.Printf("BENCH %s_ias_calls_per_runtime_with_polls %.3f\n", key, float64(calls)/float64(n))
	fmt.Printf("BENCH %s_429 %d\n", key, throttled)
	fmt.Printf("BENCH %s_ias_rps %.1f\n", key, float64(calls)/elapsed.Seconds())
	return ids
}

// teardownOne deletes a runtime and waits until all of it is gone.
func teardownOne(ctx context.Context, b *testing.B, id string) {
	if err := deleteRuntime(ctx, id); err != nil {
		b.Fatal(err)
	}
	waitAll(ctx, b, []string{id}, time.Minute, gone)
}

// gone tells whether a runtime's app, runtime Secret and resources are all gone.
func gone(ctx context.Context, id string) bool {
	if hasSecret(ctx, id) || len(sim.AppsNamed(id)) > 0 {
		return false
	}
	a := &iasv1alpha1.IASApplication{}
	r := &runtimev1alpha1.RuntimeSecret{}
	return mgmt.Get(ctx, key2(id), a) != nil && mgmt.Get(ctx, key2(id), r) != nil
}

// teardown deletes runtimes and waits until their apps, runtime Secrets and
// resources are all gone.
func teardown(ctx context.Context, b *testing.B, key string, ids []string) {
	calls0, _ := iasCalls()
	start := time.Now()
	for _, id := range ids {
		if err := deleteRuntime(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	waitAll(ctx, b, ids, 10*time.Minute, gone)
	elapsed := time.Since(start)
	calls, _ := iasCalls()
	bound := float64(calls-calls0) / tenantQPS
	benchfig.Figure(key+"_s", elapsed.Seconds(), 1.3*bound)
}

// newWhilePolling: with the runtimes above Ready and polling at benchPoll,
// new runtimes one a second; each must get its Secret within 5s.
func newWhilePolling(ctx context.Context, b *testing.B, n int) {
	// Let the polls of the bring-up spread out into steady state.
	time.Sleep(benchPoll)
	calls0, _ := iasCalls()
	steadyStart := time.Now()
	took := newRuntimesEvery(ctx, b, "new", n, time.Second, 2*time.Minute)
	calls, _ := iasCalls()
	benchfig.Figure("new_runtime_p99_s_1000", benchfig.Percentile(took, 0.99).Seconds(), 5)
	fmt.Printf("BENCH new_runtime_p50_s_1000 %.3f\n", benchfig.Percentile(took, 0.5).Seconds())
	fmt.Printf("BENCH steady_ias_rps_1000_poll60s %.1f\n", float64(calls-calls0)/time.Since(steadyStart).Seconds())
}
