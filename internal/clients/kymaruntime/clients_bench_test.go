package kymaruntime

import "testing"

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
