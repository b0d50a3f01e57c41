//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/kinds"
	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
)

// restProcesses are the processes whose CPU the at-rest figures break down.
var restProcesses = []string{"crossplane", "function-eventing-auth", "kube-controller-manager"}

// functionTTL is how long core keeps the composition function's answers
// (function-eventing-auth's DefaultTTL, a module of its own).
const functionTTL = 10 * time.Hour

// resyncsWakingEachXR are the informers of core whose resync reconciles every
// EventingAuth: the EventingAuths', the IASApplications', the RuntimeSecrets'
// and the CompositionRevisions' (core v2.4.2 maps each to the XRs).
const resyncsWakingEachXR = 4

// atRest waits until all EventingAuths are Ready and core has settled, then
// takes what the stack costs with nothing changing: over restWindow, write requests to the
// management API server by every party, Crossplane core's reconciles and CPU,
// the provider's CPU and its IAS calls; then what one reconcile of every
// EventingAuth costs when nothing changed (as a resync or the TTL causes), and
// what those cost an hour at the stack's settings (a landscape's). Each figure is per
// 1,000 runtimes on the stack (composed and direct) and broken down. A Ready
// runtime whose inputs did not change should cost no write; what remains is
// leader-election leases and the periodic reconciles' share.
func (c *composed) atRest(ctx context.Context, composedRuntimes int) {
	c.waitXRsReady(ctx, composedRuntimes)
	c.settle(ctx)
	var perMinute []float64 // EventingAuth reconciles in each minute of the window
	w := c.measure(ctx, func() {
		end := time.Now().Add(restWindowFor(c.b))
		last := c.xrReconciles(ctx)
		for time.Now().Before(end) {
			select {
			case <-ctx.Done():
				c.b.Fatal(ctx.Err())
			case <-time.After(min(time.Minute, time.Until(end))):
			}
			n := c.xrReconciles(ctx)
			perMinute, last = append(perMinute, n-last), n
		}
	})
	per1000 := 1000 / float64(c.runtimes)
	fmt.Printf("BENCH composed_rest_runtimes %d\n", c.runtimes)
	fmt.Printf("BENCH composed_rest_window_s %.0f\n", w.took.Seconds())
	for _, k := range slices.Sorted(maps.Keys(w.writes)) {
		fmt.Printf("BENCH composed_rest_api_writes_per_s{%s} %.3f\n", commaKey(k), w.writes[k]/w.took.Seconds())
	}
	for _, k := range slices.Sorted(maps.Keys(w.reconciles)) {
		fmt.Printf("BENCH composed_rest_core_reconciles_per_min{%s} %.2f\n", k, w.reconciles[k]/w.took.Minutes())
	}
	for _, p := range slices.Sorted(maps.Keys(w.cpu)) {
		fmt.Printf("BENCH composed_rest_cpu_s_per_min{%s} %.2f\n", p, w.cpu[p].Seconds()/w.took.Minutes())
	}
	fmt.Printf("BENCH composed_rest_ias_calls_per_s %.3f\n", float64(w.iasCalls)/w.took.Seconds())
	for i, n := range perMinute {
		fmt.Printf("BENCH composed_rest_xr_reconciles{minute=%d} %.0f\n", i+1, n)
	}

	// The periodic share: every EventingAuth reconciled with nothing changed,
	// at most once per TTL, once per core poll of it and once per resync of
	// each informer that wakes it.
	idle := c.idleReconciles(ctx, composedRuntimes)
	perHour := float64(composedRuntimes) * (time.Hour.Hours()/functionTTL.Hours() + time.Hour.Hours()/kinds.XRPollInterval.Hours() +
		resyncsWakingEachXR*time.Hour.Hours()/localstack.CoreSyncInterval.Hours())
	fmt.Printf("BENCH composed_rest_periodic_reconciles_per_h %.0f\n", perHour)
	periodic := func(v float64) float64 { return v / float64(composedRuntimes) * perHour / 3600 } // per second
	benchfig.Figure("composed_rest_api_writes_per_s_per_1000",
		per1000*(sum(w.writes)/w.took.Seconds()+periodic(sum(idle.writes))), 1)
	// The periodic reconciles' share, as for the writes.
	benchfig.Figure("composed_rest_core_reconciles_per_min_per_1000",
		per1000*(sum(w.reconciles)/w.took.Minutes()+60*periodic(float64(composedRuntimes))), 1000.0/60)
	fmt.Printf("BENCH composed_rest_core_cpu_s_per_min_per_1000 %.3f\n",
		per1000*(w.cpu["crossplane"].Seconds()/w.took.Minutes()+60*periodic(idle.cpu["crossplane"].Seconds())))
	fmt.Printf("BENCH composed_rest_function_cpu_s_per_min_per_1000 %.3f\n",
		per1000*(w.cpu["function-eventing-auth"].Seconds()/w.took.Minutes()+60*periodic(idle.cpu["function-eventing-auth"].Seconds())))
	fmt.Printf("BENCH composed_rest_provider_cpu_s_per_min_per_1000 %.3f\n", per1000*w.cpu["provider"].Seconds()/w.took.Minutes())
}

// restCost is what the stack did while something ran: write requests to the
// management API server by "resource verb", core's reconciles by
// "controller,result", CPU by process, IAS calls.
type restCost struct {
	took       time.Duration
	writes     map[string]float64
	reconciles map[string]float64
	cpu        map[string]time.Duration
	iasCalls   int
}

// measure takes what the stack does while during runs.
func (c *composed) measure(ctx context.Context, during func()) restCost {
	writes0, err := apiWrites(ctx, c.s.MgmtKubeconfig)
	if err != nil {
		c.b.Fatal(err)
	}
	reconciles0, err := coreReconciles(ctx, c.s.CoreMetrics)
	if err != nil {
		c.b.Fatal(err)
	}
	cpu0, calls0, start := c.cpu(), c.iasCalls(), time.Now()
	during()
	out := restCost{took: time.Since(start), iasCalls: c.iasCalls() - calls0, cpu: c.cpu()}
	if out.writes, err = apiWrites(ctx, c.s.MgmtKubeconfig); err != nil {
		c.b.Fatal(err)
	}
	if out.reconciles, err = coreReconciles(ctx, c.s.CoreMetrics); err != nil {
		c.b.Fatal(err)
	}
	for k := range out.writes {
		if out.writes[k] -= writes0[k]; out.writes[k] <= 0 {
			delete(out.writes, k)
		}
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

func sum(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
}

// settle waits until core has made no EventingAuth reconcile for half a
// minute, and prints how long that took and how many it made meanwhile: right
// after a large bring-up core reconciles every EventingAuth once more (3,000 in
// the minute after they were all Ready, with no write by anyone), which is the
// bring-up's cost, not the cost at rest.
func (c *composed) settle(ctx context.Context) {
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
	fmt.Printf("BENCH composed_rest_settle_s %.0f\n", time.Since(start).Seconds())
	fmt.Printf("BENCH composed_rest_settle_xr_reconciles %.0f\n", last-first)
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

// idleReconciles has core reconcile every EventingAuth once with nothing
// changed, as a resync of its informers does, by labelling the Composition's
// newest CompositionRevision (core wakes every XR of the Composition when a
// revision changes); it prints and returns what those reconciles cost, the
// label's own write left out.
func (c *composed) idleReconciles(ctx context.Context, n int) restCost {
	revs := &unstructured.UnstructuredList{}
	revs.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "CompositionRevisionList"})
	if err := c.mgmt.List(ctx, revs); err != nil {
		c.b.Fatal(err)
	}
	var newest *unstructured.Unstructured
	for i := range revs.Items {
		r := &revs.Items[i]
		rev, _, _ := unstructured.NestedInt64(r.Object, "spec", "revision")
		if newest == nil {
			newest = r
		} else if cur, _, _ := unstructured.NestedInt64(newest.Object, "spec", "revision"); rev > cur {
			newest = r
		}
	}
	if newest == nil {
		c.b.Fatal("no CompositionRevision")
	}
	cost := c.measure(ctx, func() {
		before := c.xrReconciles(ctx)
		patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{"bench.eventingauth.kyma-project.io/idle-reconcile":"%d"}}}`, time.Now().Unix()))
		if err := c.mgmt.Patch(ctx, newest, client.RawPatch(types.MergePatchType, patch)); err != nil {
			c.b.Fatal(err)
		}
		deadline := time.Now().Add(15 * time.Minute)
		for c.xrReconciles(ctx)-before < float64(n) {
			if time.Now().After(deadline) {
				c.b.Fatalf("core reconciled %.0f of %d EventingAuths in 15 minutes", c.xrReconciles(ctx)-before, n)
			}
			time.Sleep(time.Second)
		}
		time.Sleep(5 * time.Second) // the last reconciles' writes
	})
	cost.writes["compositionrevisions PATCH"]--
	fmt.Printf("BENCH composed_idle_reconcile_all_s %.1f\n", cost.took.Seconds())
	for _, k := range slices.Sorted(maps.Keys(cost.writes)) {
		if v := cost.writes[k] / float64(n); v >= 0.01 {
			fmt.Printf("BENCH composed_idle_reconcile_api_writes_per_xr{%s} %.2f\n", commaKey(k), v)
		}
	}
	fmt.Printf("BENCH composed_idle_reconcile_api_writes_per_xr %.2f\n", sum(cost.writes)/float64(n))
	for _, p := range slices.Sorted(maps.Keys(cost.cpu)) {
		fmt.Printf("BENCH composed_idle_reconcile_cpu_ms_per_xr{%s} %.2f\n", p, 1000*cost.cpu[p].Seconds()/float64(n))
	}
	return cost
}

// restWindowFor is restWindow, or BENCH_REST_WINDOW (a Go duration) for a
// quicker look.
func restWindowFor(b *testing.B) time.Duration {
	v := os.Getenv("BENCH_REST_WINDOW")
	if v == "" {
		return restWindow
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("BENCH_REST_WINDOW=%q: want a duration such as 1m", v)
	}
	return d
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
		l.SetGroupVersionKind(kinds.EventingAuth.GroupVersion().WithKind("EventingAuthList"))
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
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		out[l["controller"]+","+l["result"]] += m.GetCounter().GetValue()
	}
	return out, nil
}
