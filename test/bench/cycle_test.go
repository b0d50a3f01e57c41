package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// operatorCycleCPUms is what eventing-auth-manager, as its image runs it,
// spent per runtime on the bring-up and deletion of the cycle below at 200
// runtimes, measured side by side on the same 2-core machine (BENCH_OPERATOR,
// the mean of the eight rounds of three runs); the bound when the operator is
// not run.
// operatorCyclePeakMiB is its least peak resident memory in those rounds.
const (
	operatorCycleCPUms   = 31.4
	operatorCyclePeakMiB = 78.6
)

// cpuShareOfOperator is the share of the operator's CPU the provider may
// spend on a runtime's bring-up and deletion.
const cpuShareOfOperator = 0.8

// BenchmarkCycle takes what a runtime costs the provider over its whole life,
// at 200 and at 1,000 runtimes, each on a provider process of its own run as
// a new user runs it: default flags, and the runtime-watcher's listener on as
// cluster/install.yaml ships it. The cycle is the one eventing-auth-manager was
// measured on: the runtimes made at once, a minute of drift (a tenth of their
// Secrets edited on the runtimes at its start, repaired through the
// runtime-watcher), a minute at rest, all of them deleted, then 5 runtimes made
// and deleted one at a time. It prints the provider's CPU per runtime (whole
// cycle, and bring-up with deletion), held to the operator's, and by phase;
// CPU at rest per 1,000 runtimes a minute; its reconciles per runtime by kind
// and result; the management API server's writes per runtime by phase; and the
// IAS calls per deleted runtime by operation.
//
// BENCH_OPERATOR=<eventing-auth-manager binary> runs the same cycle on the
// operator first, at each size, and holds the provider's bring-up and deletion
// and its whole cycle to what the operator spent in that run (operator_test.go)
// instead of to operatorCycleCPUms. BENCH_CYCLE_ROUNDS=<k> (with
// BENCH_OPERATOR) runs k pairs of cycles in the order operator, provider,
// provider, operator, ... and holds the provider's mean to the operator's:
// each round prints its own figures, and the held ones follow the last.
// BENCH_PROFILE_DIR=<dir> also writes CPU profiles of the provider, 10 s each,
// named after the cycle and phase they began in (go tool pprof merges them);
// BENCH_CYCLE_ONLY=<n> runs the cycle at n runtimes only; BENCH_CYCLE_QUICK=1
// leaves out drift and rest.
func BenchmarkCycle(b *testing.B) {
	for range b.N {
		sizes := []int{200, 1000}
		if n := envInt("BENCH_CYCLE_ONLY", 0); n > 0 {
			sizes = []int{n} // one size, to compare changes quickly
		}
		_, watcherArgs := watcherOn(context.Background(), b)
		operator := operatorFromEnv(b)
		for _, n := range sizes {
			if operator == nil {
				bound := cycleCost{whole: operatorCycleCPUms, life: operatorCycleCPUms}
				if n == 200 {
					bound.peakMiB = operatorCyclePeakMiB
				}
				holdCycle(n, cycle(context.Background(), b, n, watcherArgs), bound)
				continue
			}
			var spent, bound []cycleCost
			for r := range max(envInt("BENCH_CYCLE_ROUNDS", 1), 1) {
				// Both on the machine as it is this hour, the provider stopped
				// while the operator runs; in odd rounds the provider goes
				// first, so that a machine that speeds up or slows down over
				// the rounds weighs on both alike.
				if r%2 == 1 {
					spent = append(spent, cycle(context.Background(), b, n, watcherArgs))
				}
				if provider != nil {
					_ = provider.Process.Kill()
				}
				bound = append(bound, operator.cycle(context.Background(), b, n))
				if r%2 == 0 {
					spent = append(spent, cycle(context.Background(), b, n, watcherArgs))
				}
			}
			holdCycle(n, meanCost(spent), meanCost(bound))
		}
	}
}

// holdCycle prints the provider's CPU per runtime and its peak memory at n
// runtimes, held to the operator's.
func holdCycle(n int, spent, operator cycleCost) {
	benchfig.Figure(fmt.Sprintf("provider_cpu_ms_per_runtime_%d", n), spent.whole, operator.whole)
	benchfig.Figure(fmt.Sprintf("provider_cpu_ms_per_runtime_bringup_delete_%d", n), spent.life, cpuShareOfOperator*operator.life)
	if operator.peakMiB > 0 {
		benchfig.Figure(fmt.Sprintf("cycle_peak_rss_mib_%d", n), spent.peakMiB, operator.peakMiB)
	} else {
		fmt.Printf("BENCH cycle_peak_rss_mib_%d %.1f\n", n, spent.peakMiB)
	}
}

// meanCost is the mean of the costs of several cycles.
func meanCost(costs []cycleCost) cycleCost {
	var m cycleCost
	for _, c := range costs {
		m.whole += c.whole / float64(len(costs))
		m.life += c.life / float64(len(costs))
		m.peakMiB += c.peakMiB / float64(len(costs))
	}
	return m
}

// cyclePhases are the parts of a cycle, in order.
var cyclePhases = []string{"bringup", "drift", "rest", "delete", "singles"}

// cycle runs the cycle at n runtimes on a provider of its own and returns its
// CPU per runtime and peak memory.
func cycle(ctx context.Context, b *testing.B, n int, watcherArgs []string) cycleCost {
	name := fmt.Sprintf("cycle-%d", n)
	args := slices.Clone(watcherArgs)
	prof := profiler(b, name, &args)
	if provider == nil {
		startProviderAs(b, name, args...)
	} else {
		restartProvider(b, name, args...)
	}
	waitServing(b)
	defer prof.stop()

	cpu := map[string]time.Duration{}
	took := map[string]time.Duration{}
	phase := func(p string, run func()) {
		prof.phase(p)
		c0, t0, w0, s0 := benchfig.UsageOf(provider.Process.Pid).CPU, time.Now(), apiWrites(ctx, b), scrape(b)
		l0 := logLines(b)
		run()
		cpu[p], took[p] = benchfig.UsageOf(provider.Process.Pid).CPU-c0, time.Since(t0)
		// What a person reading the provider's log at the default level gets:
		// at most a line per runtime made.
		if lines := logLines(b) - l0; p == "bringup" {
			benchfig.Figure(fmt.Sprintf("cycle_bringup_log_lines_%d", n), float64(lines), float64(n))
		} else {
			fmt.Printf("BENCH cycle_log_lines_%d{%s} %d\n", n, p, lines)
		}
		printPerRuntime(fmt.Sprintf("cycle_api_writes_per_runtime_%d{%s}", n, p), w0, apiWrites(ctx, b), n)
		// One scrape of the provider at each end: a scrape costs it CPU, and
		// the one at the start counts in the phase.
		s1 := scrape(b)
		printPerRuntime(fmt.Sprintf("cycle_runtime_calls_per_runtime_%d{%s}", n, p), runtimeCalls(b, s0), runtimeCalls(b, s1), n)
		fmt.Printf("  reconciles per runtime:")
		reconciles := reconcilesByResult(s0, s1)
		for _, k := range slices.Sorted(maps.Keys(reconciles)) {
			fmt.Printf(" %s=%.2f", k, reconciles[k]/float64(n))
		}
		fmt.Println()
	}
	m0 := scrape(b)
	var ids []string
	var deleting iassim.Stats
	phase("bringup", func() { ids = bringUp(ctx, b, fmt.Sprintf("cycle_bringup_%d", n), n) })
	// BENCH_CYCLE_QUICK leaves out the minutes of drift and rest, to compare
	// bring-up and deletion of two changes by turns more often.
	quick := os.Getenv("BENCH_CYCLE_QUICK") != ""
	if !quick {
		phase("drift", func() {
			start := time.Now()
			drift(ctx, b, ids[:n/10])
			time.Sleep(time.Until(start.Add(time.Minute)))
		})
		phase("rest", func() { time.Sleep(time.Minute) })
	}
	phase("delete", func() {
		st0 := sim.Stats()
		teardown(ctx, b, fmt.Sprintf("cycle_delete_%d", n), ids)
		deleting = sim.Stats().Since(st0)
	})
	const singles = 5
	phase("singles", func() {
		for range singles {
			id := nextID("cycle-single")
			create(ctx, b, []string{id})
			waitAll(ctx, b, []string{id}, time.Minute, hasSecret)
			teardownOne(ctx, b, id)
		}
	})
	m1 := scrape(b)
	use := benchfig.UsageOf(provider.Process.Pid)

	runtimes := float64(n + singles)
	// A runtime's client is built again after it left the cache of the
	// runtimes reconciled last: its kubeconfig parsed, its TLS set up again.
	evictions := m1.only("eventing_auth_runtime_client_evictions_total").GetCounter().GetValue() -
		m0.only("eventing_auth_runtime_client_evictions_total").GetCounter().GetValue()
	fmt.Printf("BENCH cycle_runtime_client_evictions_per_runtime_%d %.2f\n", n, evictions/runtimes)
	spent := phaseCPU("cycle", n, cpu, took, runtimes)
	spent.peakMiB = float64(use.PeakRSS) / 1024
	if !quick {
		fmt.Printf("BENCH cycle_rest_cpu_s_per_min_per_1000_%d %.2f\n", n,
			cpu["rest"].Seconds()/took["rest"].Minutes()*1000/float64(n))
	}
	// What the resident memory is made of at the cycle's end, by the Go
	// runtime's own figures: the live heap, heap pages freed but not yet
	// returned, goroutine stacks, and what the runtime holds from the system
	// in all (the rest of the RSS is the binary's code and data).
	gauge := func(metric string) float64 { return m1.only(metric).GetGauge().GetValue() / (1 << 20) }
	fmt.Printf("BENCH cycle_end_rss_mib_%d %.1f\n", n, float64(use.RSS)/1024)
	fmt.Printf("BENCH cycle_end_heap_inuse_mib_%d %.1f\n", n, gauge("go_memstats_heap_inuse_bytes"))
	fmt.Printf("BENCH cycle_end_heap_unreturned_mib_%d %.1f\n", n, gauge("go_memstats_heap_idle_bytes")-gauge("go_memstats_heap_released_bytes"))
	fmt.Printf("BENCH cycle_end_stack_mib_%d %.1f\n", n, gauge("go_memstats_stack_inuse_bytes"))
	fmt.Printf("BENCH cycle_end_go_sys_mib_%d %.1f\n", n, gauge("go_memstats_sys_bytes"))

	reconciles := reconcilesByResult(m0, m1)
	for _, k := range slices.Sorted(maps.Keys(reconciles)) {
		fmt.Printf("BENCH cycle_reconciles_per_runtime_%d{%s} %.2f\n", n, k, reconciles[k]/runtimes)
	}
	calls := 0
	for _, op := range slices.Sorted(maps.Keys(deleting)) {
		c := deleting.Count(op, 0)
		calls += c
		fmt.Printf("BENCH cycle_ias_calls_per_deleted_runtime_%d{%s} %.2f\n", n, op, float64(c)/float64(n))
		// Of those, the ones IAS answered with an error (a refusal is made again).
		for _, status := range slices.Sorted(maps.Keys(deleting[op])) {
			if status >= 300 {
				fmt.Printf("BENCH cycle_ias_calls_per_deleted_runtime_%d{%s,%d} %.2f\n", n, op, status, float64(deleting[op][status])/float64(n))
			}
		}
	}
	benchfig.Figure(fmt.Sprintf("cycle_ias_calls_per_deleted_runtime_%d", n), float64(calls)/float64(n), 2)
	return spent
}

// cycleCost is CPU per runtime in milliseconds over a whole cycle, and over
// bring-up, deletion and the single runtimes; and the peak resident memory.
type cycleCost struct{ whole, life, peakMiB float64 }

// phaseCPU prints the CPU per runtime and the length of each phase that ran,
// under prefix, and sums them.
func phaseCPU(prefix string, n int, cpu, took map[string]time.Duration, runtimes float64) cycleCost {
	total := time.Duration(0)
	for _, p := range cyclePhases {
		if _, ran := took[p]; !ran {
			continue
		}
		total += cpu[p]
		fmt.Printf("BENCH %s_cpu_ms_per_runtime_%d{%s} %.2f\n", prefix, n, p, ms(cpu[p])/runtimes)
		fmt.Printf("BENCH %s_phase_s_%d{%s} %.1f\n", prefix, n, p, took[p].Seconds())
	}
	return cycleCost{whole: ms(total) / runtimes, life: ms(cpu["bringup"]+cpu["delete"]+cpu["singles"]) / runtimes}
}

// printPerRuntime prints under key the counts that grew from before to after,
// per runtime of n: their total, then each.
func printPerRuntime(key string, before, after map[string]float64, n int) {
	keys, each, total := benchfig.WritesBetween(before, after, float64(n))
	fmt.Printf("BENCH %s %.2f\n", key, total)
	for _, k := range keys {
		fmt.Printf("  %s %.2f\n", k, each[k])
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// editSecrets edits the Secret of each runtime in ids, as someone on the
// runtime would, and returns what each held before.
func editSecrets(ctx context.Context, b *testing.B, ids []string) map[string]map[string][]byte {
	held := map[string]map[string][]byte{}
	for _, id := range ids {
		s := &corev1.Secret{}
		if err := rt.Get(ctx, client.ObjectKey{Namespace: id, Name: "eventing-webhook-auth"}, s); err != nil {
			b.Fatal(err)
		}
		held[id] = s.Data
		s.Data = map[string][]byte{"client_id": []byte("edited"), "client_secret": []byte("edited")}
		if err := rt.Update(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	return held
}

// runtimeCalls are the provider's requests to the runtimes' API server so
// far, by "runtime <method>", from a scrape of the provider.
func runtimeCalls(b *testing.B, m metricsSample) map[string]float64 {
	out := map[string]float64{}
	for method, n := range m.requestsTo(apiServer(b, runtimeKC)) {
		out["runtime "+method] = n
	}
	return out
}

// drift edits the Secret of each runtime in ids, as someone on the runtime
// would, and waits until every one holds again what it held: repaired on the
// runtime-watcher's event.
func drift(ctx context.Context, b *testing.B, ids []string) {
	held := editSecrets(ctx, b, ids)
	waitAll(ctx, b, ids, time.Minute, func(ctx context.Context, id string) bool {
		s := &corev1.Secret{}
		return rt.Get(ctx, client.ObjectKey{Namespace: id, Name: "eventing-webhook-auth"}, s) == nil &&
			equality.Semantic.DeepEqual(s.Data, held[id])
	})
}

// reconcilesByResult are the reconciles between two scrapes by
// "controller,result", of every controller of the provider.
func reconcilesByResult(before, after metricsSample) map[string]float64 {
	count := func(m metricsSample) map[string]float64 {
		out := map[string]float64{}
		for _, s := range m["controller_runtime_reconcile_total"].GetMetric() {
			out[labelValue(s, "controller")+","+labelValue(s, "result")] += s.GetCounter().GetValue()
		}
		return out
	}
	b, a := count(before), count(after)
	out := map[string]float64{}
	for k, v := range a {
		if d := v - b[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// cpuProfiler takes 10 s CPU profiles of the provider one after another while
// a cycle runs, when BENCH_PROFILE_DIR is set.
type cpuProfiler struct {
	mu       sync.Mutex
	current  string
	done     chan struct{}
	finished sync.WaitGroup
}

// profiler turns the provider's pprof endpoint on in args and returns a
// profiler of it; one that does nothing when BENCH_PROFILE_DIR is unset.
func profiler(b *testing.B, cycle string, args *[]string) *cpuProfiler {
	p := &cpuProfiler{done: make(chan struct{})}
	dir := os.Getenv("BENCH_PROFILE_DIR")
	if dir == "" {
		return p
	}
	addr := freeAddr(b)
	*args = append(*args, "--pprof-bind-address="+addr)
	p.finished.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-p.done:
				return
			default:
			}
			p.mu.Lock()
			ph := p.current
			p.mu.Unlock()
			if ph == "" {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			resp, err := http.Get("http://" + addr + "/debug/pprof/profile?seconds=10")
			if err != nil {
				time.Sleep(time.Second)
				continue
			}
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%s-%03d.pprof", cycle, ph, i)))
			if err == nil {
				_, _ = io.Copy(f, resp.Body)
				_ = f.Close()
			}
			_ = resp.Body.Close()
		}
	})
	return p
}

func (p *cpuProfiler) phase(name string) {
	p.mu.Lock()
	p.current = name
	p.mu.Unlock()
}

func (p *cpuProfiler) stop() {
	close(p.done)
	p.finished.Wait()
}
