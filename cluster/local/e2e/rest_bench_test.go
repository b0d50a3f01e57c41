//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
	"github.com/kyma-project/provider-eventing-auth/internal/provider"
	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
)

// restProcesses are the processes whose CPU the at-rest figures break down.
var restProcesses = []string{"crossplane", "function-eventing-auth", "kube-controller-manager"}

// runtimeResources are the resources a runtime's objects are of, on the
// composed path, as etcd_requests_total names them. Events are left out: etcd
// does not say what they are about (the audit's writers do).
var runtimeResources = map[string]bool{
	"kymas": true, "eventingauths": true, "iasapplications": true, "runtimesecrets": true, "secrets": true,
	"providerconfigusages": true, "clusterproviderconfigusages": true, "providerconfigs": true,
	"clusterproviderconfigs": true, "usages": true,
}

// functionTTL is how long core keeps the composition function's answers by
// default (function-eventing-auth's DefaultTTL, a module of its own).
const functionTTL = 10 * time.Hour

// BenchmarkComposedRest takes what Ready composed runtimes cost with nothing
// changing, over a window that holds every periodic cause at least once:
// every interval of the provider, Crossplane core and the function is its
// default divided by one factor (BENCH_REST_SCALE, default 100), the window is
// twice the longest of them (starting right after the bring-up, so that it
// holds two of its rounds and a rate is not over- or under-counted), and what
// periodic causes did is divided by the factor again. Only leases, whose
// intervals are the API server's and not scaled, are counted as measured.
// BENCH_REST_RUNTIMES composed runtimes (default 300), no direct ones;
// figures per 1,000 of them.
func BenchmarkComposedRest(b *testing.B) {
	scale := envInt(b, "BENCH_REST_SCALE", 100)
	n := envInt(b, "BENCH_REST_RUNTIMES", 300)
	f := time.Duration(scale)
	d := provider.DefaultSettings()
	longest := max(functionTTL, eventingauth.XRPollInterval, localstack.CoreSyncInterval, d.Sync, d.Poll, d.IASSecretCheck) / f
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute+2*longest)
	defer cancel()
	c := newComposed(b, ctx, localstack.Options{
		ProviderArgs: []string{
			"--poll=" + (d.Poll / f).String(),
			"--sync=" + (d.Sync / f).String(),
			"--ias-secret-check=" + (d.IASSecretCheck / f).String(),
			"--ias-inventory-age=" + (iasapplication.DefaultInventoryAge / f).String(),
			"--composite-poll-interval=" + (eventingauth.XRPollInterval / f).String(),
			// A rate: as many polls in a scaled poll interval as in a default one.
			fmt.Sprintf("--poll-rate=%d", d.PollRate*scale),
		},
		CorePollInterval: time.Minute / f,
		CoreSyncInterval: localstack.CoreSyncInterval / f,
		FunctionArgs:     map[string][]string{"function-eventing-auth": {"--ttl=" + (functionTTL / f).String()}},
	})
	for range b.N {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = c.nextID("rest")
		}
		c.each(ctx, ids, c.runtime)
		c.each(ctx, ids, c.kyma)
		c.waitAll(ctx, ids, 20*time.Minute, c.hasSecret)
		c.runtimes += n
		c.atRest(ctx, n, scale, 2*longest)
	}
}

// envInt is the positive integer in env, or def.
func envInt(b *testing.B, env string, def int) int {
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	i, err := strconv.Atoi(v)
	if err != nil || i <= 0 {
		b.Fatalf("%s=%q: want a positive integer", env, v)
	}
	return i
}

// atRest waits until all n EventingAuths are Ready and core has settled, then
// takes what the stack costs over window with nothing changing: write requests
// to the management API server by resource and writer, Crossplane core's
// reconciles, every process's CPU and the IAS calls, each per 1,000 runtimes
// and divided by scale but for the leases. A Ready runtime whose inputs did
// not change should cost no write; what remains is the leases and core's
// periodic applies.
func (c *composed) atRest(ctx context.Context, n, scale int, window time.Duration) {
	c.waitXRsReady(ctx, n)
	c.settle(ctx, "composed_rest")
	var perMinute []float64 // EventingAuth reconciles in each minute of the window
	w := c.measure(ctx, func() {
		end := time.Now().Add(window)
		last := c.xrReconciles(ctx)
		for time.Now().Before(end) {
			select {
			case <-ctx.Done():
				c.b.Fatal(ctx.Err())
			case <-time.After(min(time.Minute, time.Until(end))):
			}
			x := c.xrReconciles(ctx)
			perMinute, last = append(perMinute, x-last), x
		}
	})
	per1000, f := 1000/float64(n), float64(scale)
	fmt.Printf("BENCH composed_rest_runtimes %d\n", n)
	fmt.Printf("BENCH composed_rest_interval_scale %d\n", scale)
	fmt.Printf("BENCH composed_rest_window_s %.0f\n", w.took.Seconds())
	for i, x := range perMinute {
		fmt.Printf("BENCH composed_rest_xr_reconciles{minute=%d} %.0f\n", i+1, x)
	}
	// Every EventingAuth reconciled at least once: the window held the TTL.
	fmt.Printf("BENCH composed_rest_xr_reconciles_per_xr %.2f\n", sum(perMinute)/float64(n))
	// At the default intervals: periodic causes come scale times less often.
	atDefault := func(v float64, resource string) float64 {
		if resource == "leases" {
			return v
		}
		return v / f
	}
	perSecond := func(v float64) float64 { return per1000 * v / w.took.Seconds() }
	total, leases := 0.0, 0.0
	for _, k := range slices.Sorted(maps.Keys(w.writes)) {
		resource, _, _ := strings.Cut(k, " ")
		v := perSecond(atDefault(w.writes[k], resource))
		total += v
		if resource == "leases" {
			leases += v
		}
		fmt.Printf("BENCH composed_rest_api_writes_per_s_per_1000{%s} %.4f\n", commaKey(k), v)
	}
	benchfig.Figure("composed_rest_api_writes_per_s_per_1000", total, 1)
	// What of it etcd stored: core's applies of what the objects hold already
	// are answered without it. A Ready runtime's own objects store nothing;
	// the rest is the API server's and core's package manager's.
	runtimes := 0.0
	for _, r := range slices.Sorted(maps.Keys(w.stored)) {
		v := perSecond(atDefault(w.stored[r], r))
		fmt.Printf("BENCH composed_rest_stored_writes_per_s_per_1000{%s} %.4f\n", r, v)
		if runtimeResources[r] {
			runtimes += v
		}
	}
	benchfig.Figure("composed_rest_stored_runtime_writes_per_s_per_1000", runtimes, 0)
	// A landscape of 10,000: the runtimes' share ten times, the leases once.
	fmt.Printf("BENCH composed_rest_api_writes_per_h_10000 %.0f\n", 3600*(10*(total-leases)+leases/per1000))
	core := 0.0
	for k, v := range w.reconciles {
		if strings.HasPrefix(k, "composite/") {
			core += v
		}
	}
	// The design's bound: no more often than an hourly poll of each.
	benchfig.Figure("composed_rest_core_xr_reconciles_per_h_per_1000", 3600*perSecond(core/f), 1000)
	fmt.Printf("BENCH composed_rest_core_reconciles_per_h_per_1000 %.1f\n", 3600*perSecond(sum(slices.Collect(maps.Values(w.reconciles)))/f))
	for _, p := range slices.Sorted(maps.Keys(w.cpu)) {
		// Measured, CPU at the scaled intervals bounds it from above; divided
		// by the factor, from below (work that is not periodic is divided too).
		fmt.Printf("BENCH composed_rest_cpu_s_per_min_per_1000{%s} %.3f\n", p, 60*perSecond(w.cpu[p].Seconds()/f))
		fmt.Printf("BENCH composed_rest_scaled_cpu_s_per_min_per_1000{%s} %.3f\n", p, 60*perSecond(w.cpu[p].Seconds()))
	}
	fmt.Printf("BENCH composed_rest_ias_calls_per_s_per_1000 %.3f\n", perSecond(float64(w.iasCalls)/f))
}

// restCost is what the stack did while something ran: write requests to the
// management API server by "resource verb writer", core's reconciles by
// "controller,result", CPU by process, IAS calls.
type restCost struct {
	took   time.Duration
	writes map[string]float64
	// stored are the writes etcd took, by resource: a write request that
	// changed nothing stores nothing.
	stored     map[string]float64
	reconciles map[string]float64
	cpu        map[string]time.Duration
	iasCalls   int
}

// measure takes what the stack does while during runs.
func (c *composed) measure(ctx context.Context, during func()) restCost {
	audit := newAuditReader(c.b, c.s)
	reconciles0, err := coreReconciles(ctx, c.s.CoreMetrics)
	if err != nil {
		c.b.Fatal(err)
	}
	stored0, err := benchfig.StoredWrites(ctx, c.s.MgmtKubeconfig)
	if err != nil {
		c.b.Fatal(err)
	}
	cpu0, calls0, start := c.cpu(), c.iasCalls(), time.Now()
	during()
	out := restCost{took: time.Since(start), iasCalls: c.iasCalls() - calls0, cpu: c.cpu(), writes: audit.since().writes}
	if out.stored, err = benchfig.StoredWrites(ctx, c.s.MgmtKubeconfig); err != nil {
		c.b.Fatal(err)
	}
	for k := range out.stored {
		if out.stored[k] -= stored0[k]; out.stored[k] <= 0 {
			delete(out.stored, k)
		}
	}
	if out.reconciles, err = coreReconciles(ctx, c.s.CoreMetrics); err != nil {
		c.b.Fatal(err)
	}
	for k := range out.reconciles {
		if out.reconciles[k] -= reconciles0[k]; out.reconciles[k] <= 0 {
			delete(out.reconciles, k)
		}
	}
	for k := range out.cpu {
		out.cpu[k] -= cpu0[k]
	}
	return out
}

func sum(s []float64) float64 {
	t := 0.0
	for _, v := range s {
		t += v
	}
	return t
}

// settle waits until core has made no EventingAuth reconcile for half a
// minute, and prints how long that took and how many it made meanwhile: right
// after a large bring-up core reconciles every EventingAuth once more (3,000 in
// the minute after they were all Ready, with no write by anyone), which is the
// bring-up's cost, not the cost at rest.
func (c *composed) settle(ctx context.Context, prefix string) {
	const quiet, limit = 30 * time.Second, 10 * time.Minute
	start, first := time.Now(), c.xrReconciles(ctx)
	last, since := first, time.Now()
	for time.Since(since) < quiet {
		if time.Since(start) > limit {
			c.b.Fatalf("core still reconciled EventingAuths %s after they were all Ready", limit)
		}
		select {
		case <-ctx.Done():
			c.b.Fatal(ctx.Err())
		case <-time.After(5 * time.Second):
		}
		if n := c.xrReconciles(ctx); n != last {
			last, since = n, time.Now()
		}
	}
	fmt.Printf("BENCH %s_settle_s %.0f\n", prefix, time.Since(start).Seconds())
	fmt.Printf("BENCH %s_settle_xr_reconciles %.0f\n", prefix, last-first)
}

// xrController is Crossplane core's controller of EventingAuths.
const xrController = "composite/eventingauths.composite.eventingauth.kyma-project.io"

// xrReconciles is how many reconciles of EventingAuths core has made so far.
func (c *composed) xrReconciles(ctx context.Context) float64 {
	r, err := coreReconciles(ctx, c.s.CoreMetrics)
	if err != nil {
		c.b.Fatal(err)
	}
	t := 0.0
	for k, v := range r {
		if strings.HasPrefix(k, xrController+",") {
			t += v
		}
	}
	return t
}

// commaKey is "resource verb" as a label list.
func commaKey(k string) string {
	b := []byte(k)
	for i := range b {
		if b[i] == ' ' {
			b[i] = ','
		}
	}
	return string(b)
}

// cpu is the CPU time used so far by the provider and restProcesses.
func (c *composed) cpu() map[string]time.Duration {
	out := map[string]time.Duration{"provider": c.s.Provider().Usage().CPU}
	for _, p := range restProcesses {
		out[p] = c.s.Named(p).Usage().CPU
	}
	return out
}

// waitXRsReady waits until n EventingAuths are Ready and a few seconds more,
// so that the window starts with the bring-up's last writes done.
func (c *composed) waitXRsReady(ctx context.Context, n int) {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(eventingauth.Kind.GroupVersion().WithKind("EventingAuthList"))
		if err := c.mgmt.List(ctx, l, client.InNamespace(localstack.KCPNamespace)); err != nil {
			c.b.Fatal(err)
		}
		ready := 0
		for i := range l.Items {
			if localstack.Condition(&l.Items[i], "Ready") == "True" {
				ready++
			}
		}
		if ready >= n {
			break
		}
		if time.Now().After(deadline) {
			c.b.Fatalf("only %d of %d EventingAuths Ready", ready, n)
		}
		time.Sleep(2 * time.Second)
	}
	time.Sleep(15 * time.Second)
}

// metricFamilies reads the Prometheus metrics a process serves at addr.
func metricFamilies(ctx context.Context, addr string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the metrics at %s: %w", addr, err)
	}
	defer resp.Body.Close() //nolint:errcheck // Read only.
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// coreReconciles reads Crossplane core's controller_runtime_reconcile_total
// by "controller,result".
func coreReconciles(ctx context.Context, addr string) (map[string]float64, error) {
	families, err := metricFamilies(ctx, addr)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range families["controller_runtime_reconcile_total"].GetMetric() {
		l := benchfig.Labels(m)
		out[l["controller"]+","+l["result"]] += m.GetCounter().GetValue()
	}
	return out, nil
}
