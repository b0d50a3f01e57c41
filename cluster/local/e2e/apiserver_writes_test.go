//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// writeVerbs are the API server's verbs that change an object.
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true}

// apiWrites reads the management API server's apiserver_request_total and
// returns its write requests so far by "resource verb" (subresources apart:
// "eventingauths/status PUT"), to tell which component's writes bind.
func apiWrites(ctx context.Context, kubeconfig string) (map[string]float64, error) {
	cs, err := clientsetFor(kubeconfig)
	if err != nil {
		return nil, err
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if !writeVerbs[l["verb"]] {
			continue
		}
		r := l["resource"]
		if l["subresource"] != "" {
			r += "/" + l["subresource"]
		}
		out[r+" "+l["verb"]] += m.GetCounter().GetValue()
	}
	return out, nil
}

// clientsetFor is a client-go clientset of the API server a kubeconfig names.
func clientsetFor(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// printWritesPerRuntime prints the write requests per runtime between two
// readings of apiWrites, the largest first, and their total.
func printWritesPerRuntime(prefix string, before, after map[string]float64, runtimes int) {
	total := 0.0
	per := map[string]float64{}
	for k, v := range after {
		if d := (v - before[k]) / float64(runtimes); d >= 0.05 {
			per[k] = d
			total += d
		}
	}
	keys := slices.SortedFunc(maps.Keys(per), func(a, b string) int {
		if per[a] != per[b] {
			if per[a] > per[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		fmt.Printf("BENCH %s_api_writes_per_runtime{%s} %.2f\n", prefix, strings.ReplaceAll(k, " ", ","), per[k])
	}
	fmt.Printf("BENCH %s_api_writes_per_runtime %.2f\n", prefix, total)
}
