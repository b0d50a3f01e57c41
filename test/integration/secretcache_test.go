package integration

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testUnrelatedSecretsStayOut: Secrets of 1 MiB named like kubeconfigs in a
// namespace that is not the Kyma CRs' never reach the provider's cache: its
// heap stays flat, and its informers hold none of them. First in the suite,
// since it weighs the process's heap.
func testUnrelatedSecretsStayOut(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	const n, size = 50, 1 << 20
	// The heap is weighed once the start's work is done.
	before := settledHeap()
	junk := bytes.Repeat([]byte("j"), size)
	for i := range n {
		g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("kubeconfig-junk-%d", i)},
			Data: map[string][]byte{"config": junk}})).To(Succeed())
	}
	// Time for any watch to deliver them.
	time.Sleep(3 * time.Second)
	grown := settledHeap() - before
	t.Logf("heap grew by %.1f MiB beside %d MiB of another namespace's Secrets", float64(grown)/(1<<20), n*size>>20)
	g.Expect(grown).To(BeNumerically("<", 16<<20), "the provider's heap grew by %d MiB beside %d MiB of another namespace's Secrets", grown>>20, n*size>>20)
	err := informers.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kubeconfig-junk-0"}, &corev1.Secret{})
	g.Expect(err).To(HaveOccurred(), "the informer cache serves Secrets of namespace %s", ns)
	g.Expect(err.Error()).To(ContainSubstring("unknown namespace"))
}

// settledHeap is the heap once two readings a second apart differ by less than
// 2 MiB (or after 30 s), and then the least of five readings a second apart:
// work still going on in the process (a listing, an answer being read) holds
// memory for a moment, while a cache holds it in every reading.
func settledHeap() int64 {
	last := heapInUse()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		time.Sleep(time.Second)
		cur := heapInUse()
		if d := cur - last; d > -2<<20 && d < 2<<20 {
			break
		}
		last = cur
	}
	least := last
	for range 5 {
		time.Sleep(time.Second)
		least = min(least, heapInUse())
	}
	return least
}
