//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
)

// TestSafeStartAndUpgrade installs v0.1.0 without the activation policy, shows
// that nothing of the managed kinds exists and nothing is lost until the policy
// activates them, then upgrades to a rebuilt v0.2.0 with runtimes Ready: every
// runtime stays Ready, no IAS app is created again and no runtime Secret is
// written.
func TestSafeStartAndUpgrade(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s := startStack(t, ctx, localstack.Options{ProviderArgs: []string{"--poll=10s"}, Inactive: true})
	defer func() {
		if t.Failed() {
			for _, l := range []client.ObjectList{&iasv1alpha1.IASApplicationList{}, &runtimev1alpha1.RuntimeSecretList{}} {
				_ = s.Kube.List(ctx, l)
				t.Logf("%T: %+v", l, l)
			}
		}
	}()
	proxy, err := newRuntimeProxy(s.RuntimeKubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	defer proxy.Close()
	const timeout, interval = 2 * time.Minute, 250 * time.Millisecond

	// safe-start: the managed resource definitions are inactive, so the managed
	// kinds are not served, and the provider waits for them.
	for _, name := range localstack.ManagedCRDs {
		mrd, err := pkgObject(ctx, s, "apiextensions.crossplane.io/v1alpha1", "ManagedResourceDefinition", name)
		g.Expect(err).NotTo(HaveOccurred(), name)
		state, _, _ := unstructured.NestedString(mrd.Object, "spec", "state")
		g.Expect(state).To(Equal("Inactive"), name)
		g.Expect(s.Established(ctx, name)).To(BeFalse(), "%s is served while its definition is inactive", name)
	}
	ids := addRuntimes(g, ctx, s, proxy, "runtime", 3, "ga-upgrade")
	// The bridge made the EventingAuths; they wait, not Ready, for the managed kinds.
	g.Eventually(func(g Gomega) {
		for _, id := range ids {
			xr := composite(id)
			g.Expect(s.Kube.Get(ctx, client.ObjectKeyFromObject(xr), xr)).To(Succeed())
			g.Expect(localstack.Condition(xr, "Synced")).To(Equal("False"), "%s: %v", id, xr.Object["status"])
			g.Expect(localstack.Condition(xr, "Ready")).NotTo(Equal("True"), id)
		}
	}, timeout, interval).Should(Succeed())
	g.Expect(s.Provider().Running()).To(BeTrue(), "the provider exited while its kinds were inactive")
	g.Expect(s.Sim.Apps()).To(BeEmpty())

	// cluster/install.yaml's ManagedResourceActivationPolicy: served, and served by this provider.
	g.Expect(s.Activate(ctx)).To(Succeed())
	g.Eventually(func(g Gomega) {
		expectInstalled(g, ctx, s, localstack.InstallVersion)
		expectReady(g, ctx, s, ids)
	}, timeout, interval).Should(Succeed())

	// What must not change across the upgrade.
	observe := func(g Gomega) map[string]runtimeState { return runtimeStates(g, ctx, s, ids) }
	// Let every runtime's first polls settle before taking the baseline.
	time.Sleep(12 * time.Second)
	before := observe(g)
	creates := s.Sim.Stats().Count(operation.CreateApplication, 0) + s.Sim.Stats().Count(operation.CreateAPISecret, 0)

	// Upgrade: publish a rebuilt v0.2.0, then move the provider and the
	// Configuration to it, as docs/operations.md says.
	g.Expect(s.Publish(ctx, "v0.2.0")).To(Succeed())
	oldProvider := s.Provider()
	for kind, pkg := range map[string]string{
		"Provider/" + providerName:           "ghcr.io/kyma-project/provider-eventing-auth:v0.2.0",
		"Configuration/" + configurationName: "ghcr.io/kyma-project/configuration-eventing-auth:v0.2.0",
	} {
		p := &unstructured.Unstructured{}
		p.SetAPIVersion("pkg.crossplane.io/v1")
		k, name, _ := strings.Cut(kind, "/")
		p.SetKind(k)
		p.SetName(name)
		patch := []byte(fmt.Sprintf(`{"spec":{"package":%q}}`, pkg))
		g.Expect(s.Kube.Patch(ctx, p, client.RawPatch(types.MergePatchType, patch))).To(Succeed(), kind)
	}
	// Every runtime stays Ready while the new revision takes over and its
	// provider runs a full poll.
	notReady := map[string]string{}
	upgraded := time.Time{}
	g.Eventually(func(g Gomega) {
		for _, id := range ids {
			xr := composite(id)
			if err := s.Kube.Get(ctx, client.ObjectKeyFromObject(xr), xr); err != nil || localstack.Condition(xr, "Ready") != "True" {
				notReady[id] = fmt.Sprintf("%v %v", err, xr.Object["status"])
			}
		}
		if upgraded.IsZero() {
			expectInstalled(g, ctx, s, "v0.2.0")
			g.Expect(s.Provider()).NotTo(BeIdenticalTo(oldProvider), "the provider of v0.1.0 still runs")
			g.Expect(s.Provider().Log()).To(ContainSubstring(`"version":"v0.2.0"`))
			upgraded = time.Now()
		}
		g.Expect(time.Since(upgraded)).To(BeNumerically(">", 25*time.Second), "a full poll of the new provider")
	}, 3*time.Minute, 500*time.Millisecond).Should(Succeed())
	g.Expect(notReady).To(BeEmpty(), "runtimes not Ready during the upgrade")
	g.Expect(oldProvider.Running()).To(BeFalse())
	g.Expect(s.ProviderRestarts()).To(BeZero(), "the provider exited")

	g.Expect(observe(g)).To(Equal(before), "an app, an api secret or a runtime Secret changed")
	g.Expect(s.Sim.Stats().Count(operation.CreateApplication, 0)+s.Sim.Stats().Count(operation.CreateAPISecret, 0)).To(Equal(creates), "IAS objects created by the upgrade")
	for _, id := range ids {
		a := &iasv1alpha1.IASApplication{}
		g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: id}, a)).To(Succeed())
		g.Expect(a.GetCondition("Ready").Status).To(Equal(corev1.ConditionTrue), id)
	}
}
