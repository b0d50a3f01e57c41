package kymaruntime

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkClientsForCached is the cost of a reconcile that finds its runtime's
// client in the cache: a digest of the kubeconfig and a lookup.
func BenchmarkClientsForCached(b *testing.B) {
	c := NewClients(Options{Size: 10})
	kc := tokenKubeconfig(1)
	if _, err := c.For(kc); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.For(kc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientsForNew is the cost of a client for a kubeconfig not seen
// before: parsing and checking it, and building the client and its transport.
// B/op is about what one cached client holds.
func BenchmarkClientsForNew(b *testing.B) {
	c := NewClients(Options{Size: 1 << 20})
	kcs := make([][]byte, b.N)
	for i := range kcs {
		kcs[i] = tokenKubeconfig(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := c.For(kcs[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientsHeld is what a cached client holds on the heap once it has
// made a call and its connection has closed idle: what each client the cache
// may keep costs at 10,000 runtimes, where polls keep it full (the session
// cache, kept apart, is counted with it).
func BenchmarkClientsHeld(b *testing.B) {
	srv := newRuntimeServer(b)
	const n = 500
	kcs := make([][]byte, n)
	for i := range kcs {
		kcs[i] = srv.kubeconfig(fmt.Sprintf("tok-%d", i))
	}
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := NewClients(Options{Size: n, IdleTimeout: 20 * time.Millisecond})
		for _, kc := range kcs {
			core, err := c.For(kc)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := core.Secrets("ns").Get(context.Background(), "s", metav1.GetOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(200 * time.Millisecond) // the idle connections close
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-B/client")
		runtime.KeepAlive(c)
	}
}
