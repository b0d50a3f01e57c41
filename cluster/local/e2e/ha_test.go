//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
)

// TestKillTheLeaderOfTwoReplicas runs the provider as cluster/install.yaml
// installs it, two replicas with leader election behind the watcher's
// Service, and kills the leader: the standby takes over within the lease,
// repairs a runtime's Secret that was deleted after the kill, and deletes the
// runtime's app and Secret with its Kyma CR; the killed replica comes back as
// a standby. Nothing is made twice.
func TestKillTheLeaderOfTwoReplicas(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s := startStack(t, ctx, localstack.Options{ReplicasAsInstalled: true, ProviderArgs: []string{"--poll=10s"}})
	const timeout, interval = 2 * time.Minute, 250 * time.Millisecond
	g.Eventually(func(g Gomega) { expectInstalled(g, ctx, s, localstack.InstallVersion) }, timeout, interval).Should(Succeed())

	// The shape install.yaml asks for: two replicas, a PodDisruptionBudget
	// that keeps one through a drain.
	g.Expect(s.ProviderReplicas()).To(HaveLen(2))
	pdb := &policyv1.PodDisruptionBudget{}
	g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.CrossplaneNamespace, Name: "provider-eventing-auth"}, pdb)).To(Succeed())
	g.Expect(pdb.Spec.MinAvailable.IntValue()).To(Equal(1))

	const id = "3f1e2d4c-5b6a-4789-8c0d-e2e000000055"
	g.Expect(s.AddRuntime(ctx, id)).To(Succeed())
	kyma, err := s.CreateKyma(ctx, id, "ga-e2e")
	g.Expect(err).NotTo(HaveOccurred())
	conn, _ := expectOnRuntime(g, ctx, s, id, timeout)

	var leader interface {
		Kill()
		Running() bool
	}
	g.Eventually(func() bool { leader = s.Provider(); return leader != nil && leader == s.Provider() }, timeout, interval).Should(BeTrue())
	g.Expect(s.ProviderReplicas()).To(ContainElement(leader))
	killed := time.Now()
	leader.Kill()
	kubectlOnRuntime(g, ctx, s, "delete", "secret", runtimeSecret.Name)

	// The standby leads within the lease (15 s) and puts the Secret back.
	g.Eventually(func(g Gomega) {
		got := &corev1.Secret{}
		g.Expect(s.RuntimeKube.Get(ctx, runtimeSecret, got)).To(Succeed())
		g.Expect(got.Data).To(Equal(conn.Data))
	}, time.Minute, 100*time.Millisecond).Should(Succeed(), "the runtime's Secret was not put back after the leader was killed")
	t.Logf("the Secret deleted after the leader was killed was back %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	g.Eventually(func() bool { p := s.Provider(); return p != nil && p != leader && p.Running() }, time.Minute, interval).Should(BeTrue(), "no other replica leads")
	g.Expect(s.Sim.AppsNamed(id)).To(HaveLen(1), "the new leader made the app again")

	// The killed replica is started again, as the kubelet restarts it.
	g.Eventually(func(g Gomega) {
		running := 0
		for _, p := range s.ProviderReplicas() {
			if p.Running() {
				running++
			}
		}
		g.Expect(running).To(Equal(2))
	}, time.Minute, interval).Should(Succeed())

	g.Expect(s.Kube.Delete(ctx, kyma)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(kerrors.IsNotFound(s.RuntimeKube.Get(ctx, runtimeSecret, &corev1.Secret{}))).To(BeTrue(), "the Secret is still on the runtime")
		g.Expect(s.Sim.AppsNamed(id)).To(BeEmpty())
	}, timeout, interval).Should(Succeed())
}
