//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/kinds"
)

// restProcesses are the processes whose CPU the at-rest figures break down.
var restProcesses = []string{"crossplane", "function-eventing-auth", "kube-controller-manager"}

// atRest waits until all EventingAuths are Ready, then takes what the stack
// costs over restWindow with nothing changing: write requests to the
// management API server by every party, Crossplane core's reconciles and CPU,
// the provider's CPU and its IAS calls, each per 1,000 runtimes on the stack
// (composed and direct) and broken down. A Ready runtime whose inputs did not
// change should cost no write; what remains is leader-election leases and the
// hourly poll's share.
func (c *composed) atRest(ctx context.Context, composedRuntimes int) {
	c.waitXRsReady(ctx, composedRuntimes)
	writes0, err := apiWrites(ctx, c.s.MgmtKubeconfig)
	if err != nil {
		c.b.Fatal(err)
	}
	reconciles0, err := coreReconciles(ctx, c.s.CoreMetrics)
	if err != nil {
		c.b.Fatal(err)
	}
	cpu0 := c.cpu()
	calls0, start := c.iasCalls(), time.Now()
	select {
	case <-ctx.Done():
		c.b.Fatal(ctx.Err())
	case <-time.After(restWindowFor(c.b)):
	}
	window := time.Since(start)
	writes, err := apiWrites(ctx, c.s.MgmtKubeconfig)
	if err != nil {
		c.b.Fatal(err)
	}
	reconciles, err := coreReconciles(ctx, c.s.CoreMetrics)
	if err != nil {
		c.b.Fatal(err)
	}
	cpu := c.cpu()
	per1000 := 1000 / float64(c.runtimes)
	fmt.Printf("BENCH composed_rest_runtimes %d\n", c.runtimes)
	fmt.Printf("BENCH composed_rest_window_s %.0f\n", window.Seconds())

	total := 0.0
	for _, k := range slices.Sorted(maps.Keys(writes)) {
		if d := writes[k] - writes0[k]; d > 0 {
			total += d
			fmt.Printf("BENCH composed_rest_api_writes_per_s{%s} %.3f\n", commaKey(k), d/window.Seconds())
		}
	}
	figure("composed_rest_api_writes_per_s_per_1000", per1000*total/window.Seconds(), 1)

	// The hourly poll's share: every EventingAuth once an hour.
	const hourlyShare = 1000.0 / 60
	all := 0.0
	for _, k := range slices.Sorted(maps.Keys(reconciles)) {
		if d := reconciles[k] - reconciles0[k]; d > 0 {
			fmt.Printf("BENCH composed_rest_core_reconciles_per_min{%s} %.2f\n", k, d/window.Minutes())
			all += d
		}
	}
	figure("composed_rest_core_reconciles_per_min_per_1000", per1000*all/window.Minutes(), hourlyShare)

	for _, p := range append([]string{"provider"}, restProcesses...) {
		fmt.Printf("BENCH composed_rest_cpu_s_per_min{%s} %.2f\n", p, (cpu[p]-cpu0[p]).Seconds()/window.Minutes())
	}
	fmt.Printf("BENCH composed_rest_core_cpu_s_per_min_per_1000 %.3f\n", per1000*(cpu["crossplane"]-cpu0["crossplane"]).Seconds()/window.Minutes())
	fmt.Printf("BENCH composed_rest_provider_cpu_s_per_min_per_1000 %.3f\n", per1000*(cpu["provider"]-cpu0["provider"]).Seconds()/window.Minutes())
	fmt.Printf("BENCH composed_rest_ias_calls_per_s %.3f\n", float64(c.iasCalls()-calls0)/window.Seconds())
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

// coreReconciles reads Crossplane core's controller_runtime_reconcile_total
// by "controller,result".
func coreReconciles(ctx context.Context, addr string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading Crossplane core's metrics: %w", err)
	}
	defer resp.Body.Close() //nolint:errcheck // Read only.
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(&buf)
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
