// Package benchfig prints the figures of the benchmarks (make bench) in one
// form, BENCH <key> <value> bound <bound> ratio <ratio>, and takes the ones
// several benchmarks share: percentiles, and the management API server's
// write requests by resource and verb.
package benchfig

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Figure prints a figure with the bound it is held against and their ratio.
func Figure(key string, value, bound float64) {
	ratio := value / bound
	if bound == 0 && value == 0 {
		ratio = 0 // a count held at none, and none
	}
	fmt.Printf("BENCH %s %.3f bound %.3f ratio %.2f\n", key, value, bound, ratio)
}

// Percentile is the p-th (0..1) of d, which it sorts.
func Percentile(d []time.Duration, p float64) time.Duration {
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// writeVerbs are the API server's verbs that change an object.
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true}

// APIWrites reads the apiserver_request_total of the API server a kubeconfig
// names and returns its write requests so far, by every client, by "resource
// verb" (subresources apart: "runtimesecrets/status PUT").
func APIWrites(ctx context.Context, kubeconfig string) (map[string]float64, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return apiRequests(ctx, cfg, func(verb string) bool { return writeVerbs[verb] })
}

// APIRequests is APIWrites of every verb, for a kubeconfig's content.
func APIRequests(ctx context.Context, kubeconfig []byte) (map[string]float64, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	return apiRequests(ctx, cfg, func(string) bool { return true })
}

// APIRequestsAt is APIRequests of the API server at cfg.
func APIRequestsAt(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	return apiRequests(ctx, cfg, func(string) bool { return true })
}

// storedWriteOps are the operations of etcd_requests_total that change what
// etcd holds.
var storedWriteOps = map[string]bool{"create": true, "update": true, "delete": true}

// StoredWrites reads the etcd_requests_total of the API server a kubeconfig
// names and returns its writes to etcd so far by resource. A request that
// changes nothing (a server-side apply of what an object holds already) is
// an API write but stores nothing: the API server answers it without etcd.
func StoredWrites(ctx context.Context, kubeconfig string) (map[string]float64, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	families, err := metricFamilies(ctx, cfg)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range families["etcd_requests_total"].GetMetric() {
		l := Labels(m)
		if storedWriteOps[l["operation"]] {
			out[l["resource"]] += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

// Labels are a metric's labels by name.
func Labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// metricFamilies reads the metrics of the API server at cfg.
func metricFamilies(ctx context.Context, cfg *rest.Config) (map[string]*dto.MetricFamily, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(raw))
}

// apiRequests reads the requests of the verbs verb accepts.
func apiRequests(ctx context.Context, cfg *rest.Config, verb func(string) bool) (map[string]float64, error) {
	families, err := metricFamilies(ctx, cfg)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		l := Labels(m)
		if !verb(l["verb"]) {
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

// WritesBetween is the writes between two readings of APIWrites divided by
// per (runtimes, seconds), leaving out those below 0.05, the largest first,
// and their total.
func WritesBetween(before, after map[string]float64, per float64) (keys []string, each map[string]float64, total float64) {
	each = map[string]float64{}
	for k, v := range after {
		if d := (v - before[k]) / per; d >= 0.05 {
			each[k] = d
			total += d
		}
	}
	keys = slices.SortedFunc(maps.Keys(each), func(a, b string) int {
		if each[a] != each[b] {
			if each[a] > each[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys, each, total
}
