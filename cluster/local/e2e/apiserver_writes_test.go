//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
)

// apiWrites is the management API server's write requests so far, by
// "resource verb" (benchfig.APIWrites).
func apiWrites(ctx context.Context, kubeconfig string) (map[string]float64, error) {
	return benchfig.APIWrites(ctx, kubeconfig)
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
	keys, per, total := benchfig.WritesBetween(before, after, float64(runtimes))
	for _, k := range keys {
		fmt.Printf("BENCH %s_api_writes_per_runtime{%s} %.2f\n", prefix, strings.ReplaceAll(k, " ", ","), per[k])
	}
	fmt.Printf("BENCH %s_api_writes_per_runtime %.2f\n", prefix, total)
}
