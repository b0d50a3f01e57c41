// Package failover runs two provider processes with leader election and kills
// the leader while runtimes are being brought up: the standby takes over within
// the lease, and nothing is lost or made twice.
package failover

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/providerstack"
)

const (
	ns    = providerstack.Namespace
	lease = "crossplane-leader-election-provider-eventing-auth"
	// leaseDuration is controller-runtime's default, which the provider keeps.
	leaseDuration = 15 * time.Second
	runtimes      = 30
)

func TestKillTheLeader(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, which builds kube-apiserver and etcd first")
	}
	g := NewWithT(t)
	ctx := context.Background()
	// IAS lists new apps only after a while: a create the leader sent just
	// before it died must be adopted by the new leader, not made again.
	s, err := providerstack.Start(ctx, t.TempDir(), iassim.Options{Latency: 50 * time.Millisecond, ListLag: 2 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(s.Stop)
	mgmt, rt, sim, rtKC := s.Mgmt, s.Runtime, s.Sim, s.RuntimeKubeconfig
	start := func(name string) *exec.Cmd {
		cmd, err := s.Provider(name, "--leader-election", "--leader-election-namespace="+ns, "--kyma-bridge=false",
			"--poll=10s", "--ias-list-settle=6s")
		g.Expect(err).NotTo(HaveOccurred())
		return cmd
	}

	// The first process leads; the second stands by.
	leader := start("provider-a")
	first := holder(ctx, g, mgmt, "")
	start("provider-b")

	ids := make([]string, runtimes)
	for i := range ids {
		ids[i] = fmt.Sprintf("rt-%02d", i)
		g.Expect(rt.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ids[i]}})).To(Succeed())
		g.Expect(mgmt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + ids[i], Namespace: ns},
			Data: map[string][]byte{"config": rtKC}})).To(Succeed())
	}
	// Runtimes arrive while the leader dies: some before, some after.
	for i, id := range ids {
		if i == runtimes/2 {
			// Once the leader has sent creates, kill it without a chance to clean up.
			g.Eventually(func() int { return len(sim.Apps()) }, 30*time.Second, 50*time.Millisecond).Should(BeNumerically(">", 0))
			g.Expect(leader.Process.Kill()).To(Succeed())
		}
		app := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns}}
		app.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: id + "-ias"})
		g.Expect(mgmt.Create(ctx, app)).To(Succeed())
		g.Expect(mgmt.Create(ctx, &runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns},
			Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: runtimev1alpha1.RuntimeSecretParameters{
				RuntimeID: id, ApplicationRef: &xpv2.NamespacedReference{Name: id},
				Target: runtimev1alpha1.TargetSecret{Namespace: id, Name: "eventing-webhook-auth"}}}})).To(Succeed())
	}
	killed := time.Now()

	// The standby takes the lease within its duration (and a retry period).
	second := holder(ctx, g, mgmt, first)
	took := time.Since(killed)
	t.Logf("handover after %s (lease %s)", took.Round(100*time.Millisecond), leaseDuration)
	g.Expect(took).To(BeNumerically("<=", leaseDuration+5*time.Second), "the standby %s took over late", second)

	// Every runtime gets its Secret, equal to its connection Secret; one app each.
	g.Eventually(func(g Gomega) {
		for _, id := range ids {
			conn := &corev1.Secret{}
			g.Expect(mgmt.Get(ctx, client.ObjectKey{Namespace: ns, Name: id + "-ias"}, conn)).To(Succeed())
			s := &corev1.Secret{}
			g.Expect(rt.Get(ctx, client.ObjectKey{Namespace: id, Name: "eventing-webhook-auth"}, s)).To(Succeed(), id)
			g.Expect(s.Data).To(Equal(conn.Data), id)
		}
	}, 2*time.Minute, 500*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		for _, id := range ids {
			g.Expect(sim.AppsNamed(id)).To(HaveLen(1), "runtime %s has a duplicate app", id)
		}
	}, 5*time.Second, 500*time.Millisecond).Should(Succeed())
	g.Expect(sim.Apps()).To(HaveLen(runtimes))
}

// holder waits until the provider's Lease is held by someone other than not,
// and returns who.
func holder(ctx context.Context, g Gomega, c client.Client, not string) string {
	var who string
	g.Eventually(func(g Gomega) {
		l := &coordinationv1.Lease{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: lease}, l)).To(Succeed())
		g.Expect(l.Spec.HolderIdentity).NotTo(BeNil())
		who = *l.Spec.HolderIdentity
		g.Expect(who).NotTo(BeEmpty())
		g.Expect(who).NotTo(Equal(not))
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
	return who
}
