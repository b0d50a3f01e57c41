package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
)

// apiWrites is the management API server's write requests so far (by every
// client), by "resource verb".
func apiWrites(ctx context.Context, b *testing.B) map[string]float64 {
	w, err := benchfig.APIWrites(ctx, stack.MgmtKubeconfig())
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// printWritesPerSecond prints the writes per second between two readings of
// apiWrites, their total first, then the largest first.
func printWritesPerSecond(key string, before, after map[string]float64, seconds float64) {
	keys, each, total := benchfig.WritesBetween(before, after, seconds)
	fmt.Printf("BENCH %s %.1f\n", key, total)
	for _, k := range keys {
		fmt.Printf("  %s %.1f/s\n", k, each[k])
	}
}
