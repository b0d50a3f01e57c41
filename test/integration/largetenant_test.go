package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/internal/provider"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// testLargeTenantNeighbours: 20 namespaces, each with a ProviderConfig of a
// user of its own at a tenant of 3,000 apps with long descriptions, and an
// IASApplication there; then the provider restarts. What the provider keeps
// of their listings stays within the namespaces' shared budget, as its
// metric shows throughout, and the platform's resources beside them stay
// Ready and a new one becomes Ready. The heap's growth is logged: in the
// shared test process it is only a hint (BenchmarkHostileNeighbours weighs
// the provider's own process).
func testLargeTenantNeighbours(t *testing.T) {
	g := NewWithT(t)
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
	before := settledHeap()
	stop := sampleMax(t, "eventing_auth_ias_namespaced_inventory_bytes{}")
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

	held := stop()
	restartProvider(t)
	stop = sampleMax(t, "eventing_auth_ias_namespaced_inventory_bytes{}")
	after := onPlatform("runtime-platform-large-after-restart")
	g.Expect(k8s.Create(ctx, after)).To(Succeed())
	waitReady(t, after)
	for _, a := range append(neighbours, platformApps...) {
		waitReady(t, a)
	}
	held = max(held, stop())
	grown := settledHeap() - before
	t.Logf("20 namespaces at a tenant of 3,000 apps with long descriptions, then a restart: namespaces' listings held at most %.1f MiB; heap %+.1f MiB",
		held/(1<<20), float64(grown)/(1<<20))
	g.Expect(held).To(BeNumerically(">", 0), "the namespaces' listings were never held: the scenario did not list")
	g.Expect(held).To(BeNumerically("<=", inventory.DefaultNamespaceBytes), "the namespaces' listings held more than their budget")
}

// sampleMax reads the provider's metric every 100 ms until the returned
// function is called, which returns the largest value seen.
func sampleMax(t *testing.T, series string) func() float64 {
	done, result := make(chan struct{}), make(chan float64, 1)
	go func() {
		most := 0.0
		for {
			most = max(most, scrape(NewWithT(t))[series])
			select {
			case <-done:
				result <- most
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() float64 {
		close(done)
		return <-result
	}
}

// testNamespacedCredentialsBounded: with the provider keeping state for one
// namespaced set of credentials (--ias-max-namespaced-credentials=1, the
// suite's many namespaced configs beside it), of two new namespaces' configs
// at most one is served; the other's resource says why on its condition, and
// a platform resource beside them becomes Ready.
func testNamespacedCredentialsBounded(t *testing.T) {
	g := NewWithT(t)
	restartProviderWith(t, func(s *provider.Settings) { s.IASMaxNamespacedCredentials = 1 })
	platform := newTenant(t, newNamespace(t), iassim.Options{})
	_, onPlatform := platformConfig(t, platform)
	var apps []managedObject
	for range 2 {
		a := newTenant(t, newNamespace(t), iassim.Options{}).app("runtime-beyond-the-bound")
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
		apps = append(apps, a)
	}
	p := onPlatform("runtime-platform-beside-the-bound")
	g.Expect(k8s.Create(ctx, p)).To(Succeed())
	waitReady(t, p)
	g.Eventually(func(g Gomega) {
		refused := 0
		for _, a := range apps {
			if st, msg := condition(g, a, xpv2.TypeSynced); st == corev1.ConditionFalse &&
				strings.Contains(msg, "keeps as many credentials of namespaced ProviderConfigs as it may") {
				refused++
			}
		}
		g.Expect(refused).To(BeNumerically(">=", 1), "new namespaces' configs beyond the bound of one")
	}, timeout, 200*time.Millisecond).Should(Succeed())
}
