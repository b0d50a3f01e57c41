package integration

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// testLargeTenantNeighbours: 20 namespaces, each with a ProviderConfig of a
// user of its own at a tenant of 3,000 apps with long descriptions, and an
// IASApplication there; then the provider restarts. What the provider keeps
// of their listings stays within the namespaces' shared budget: its heap, once
// every one of them is Ready again, is at most 64 MiB above what it was
// before they came, and the platform's resources beside them stay Ready and a
// new one becomes Ready. Alone, since it weighs the process's heap.
func testLargeTenantNeighbours(t *testing.T) {
	g := NewWithT(t)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	platform := newTenant(t, newNamespace(t), iassim.Options{})
	_, onPlatform := platformConfig(t, platform)
	var platformApps []managedObject
	for i := range 5 {
		a := onPlatform(fmt.Sprintf("runtime-platform-large-%d", i))
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
		platformApps = append(platformApps, a)
	}
	for _, a := range platformApps {
		waitReady(t, a)
	}

	large := newTenant(t, newNamespace(t), iassim.Options{RateLimit: -1})
	long := strings.Repeat("d", 3000)
	for i := range 3000 {
		large.sim.AddApp(iassim.App{Name: fmt.Sprintf("large-%d", i), Description: long})
	}
	before := settledHeap(heap)
	var neighbours []managedObject
	for i := range 20 {
		user, password := fmt.Sprintf("user-%d", i), fmt.Sprintf("pw-large-%d-s3cr3t", i)
		large.sim.AddUser(user, password)
		tn := sameTenant(t, large, newNamespace(t), password, nil)
		tn.username = user
		tn.writeCreds(t, map[string]string{"username": user, "password": password, "url": large.sim.URL})
		a := tn.app(fmt.Sprintf("runtime-neighbour-large-%d", i))
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
		neighbours = append(neighbours, a)
	}
	for _, a := range neighbours {
		waitReady(t, a)
	}

	restartProvider(t)
	after := onPlatform("runtime-platform-large-after-restart")
	g.Expect(k8s.Create(ctx, after)).To(Succeed())
	waitReady(t, after)
	for _, a := range append(neighbours, platformApps...) {
		waitReady(t, a)
	}
	grown := int64(settledHeap(heap)) - int64(before)
	t.Logf("20 namespaces at a tenant of 3,000 apps with long descriptions, then a restart: heap %+.1f MiB", float64(grown)/(1<<20))
	g.Expect(grown).To(BeNumerically("<=", 64<<20), "the provider's heap grew by %d MiB", grown>>20)
}
