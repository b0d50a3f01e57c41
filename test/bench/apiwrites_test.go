package bench

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// apiWrites is the management API server's write requests so far (by every
// client), by "resource verb", subresources apart ("runtimesecrets/status PUT").
func apiWrites(ctx context.Context, b *testing.B) map[string]float64 {
	cfg, err := clientcmd.BuildConfigFromFlags("", stack.MgmtKubeconfig())
	if err != nil {
		b.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		b.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		switch l["verb"] {
		case "POST", "PUT", "PATCH", "APPLY", "DELETE":
		default:
			continue
		}
		r := l["resource"]
		if l["subresource"] != "" {
			r += "/" + l["subresource"]
		}
		out[r+" "+l["verb"]] += m.GetCounter().GetValue()
	}
	return out
}

// printWritesPerSecond prints the writes per second between two readings of
// apiWrites, the largest first, and their total.
func printWritesPerSecond(key string, before, after map[string]float64, seconds float64) {
	per := map[string]float64{}
	total := 0.0
	for k, v := range after {
		if d := (v - before[k]) / seconds; d >= 0.05 {
			per[k] = d
			total += d
		}
	}
	fmt.Printf("BENCH %s %.1f\n", key, total)
	for _, k := range slices.SortedFunc(maps.Keys(per), func(a, c string) int {
		switch {
		case per[a] > per[c]:
			return -1
		case per[a] < per[c]:
			return 1
		}
		return 0
	}) {
		fmt.Printf("  %s %.1f/s\n", k, per[k])
	}
}
