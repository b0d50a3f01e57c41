//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
	"github.com/kyma-project/provider-eventing-auth/internal/migrate"
)

// TestBackToTheOperatorAndForward goes from the provider back to
// eventing-auth-manager and forward again with runtimes Ready throughout: the
// Configuration is removed, `eventing-auth-migrate --back` hands every
// runtime back (the operator's CRD and EventingAuths made, the connection
// Secrets kept for the Kyma CRs), then, with the operator gone, the
// Configuration is installed again and the migration finishes each runtime.
// No runtime's Secret and no IAS app or api secret changes at any point, and
// the provider serves a new Kyma CR and a deletion afterwards.
// Where E2E_OPERATOR names an eventing-auth-manager binary (built from its own
// repository, which the module proxy does not serve), the operator runs in
// between and serves a new Kyma CR and a deletion.
func TestBackToTheOperatorAndForward(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	const timeout, interval = 3 * time.Minute, 250 * time.Millisecond
	s, proxy, ids := readyRuntimes(t, g, ctx, "runtime-back", 3, timeout)
	time.Sleep(12 * time.Second)
	before := runtimeStates(g, ctx, s, ids)
	unchanged := iasWrites(s)
	runMigrate := migrateCommand(g, ctx, s)

	// The kyma bridge would make every EventingAuth again: refused while the
	// Configuration is installed.
	got, code := runMigrate("--back", "--dry-run")
	g.Expect(code).To(Equal(1), got)
	g.Expect(got).To(ContainSubstring("Remove it first"))

	// Crossplane marks the XRD's deletion; its CRD goes once no EventingAuth
	// is left, which the way back sees to.
	reinstall := removeConfiguration(g, ctx, s, timeout, interval)

	got, code = runMigrate("--back", "--wait=4m")
	g.Expect(code).To(Equal(0), got)
	g.Expect(got).To(ContainSubstring("3 runtimes of the provider, handed back to eventing-auth-manager: 3 completed"))
	for _, id := range ids {
		old := named(migrate.OperatorEventingAuthGroupVersionKind, id)
		g.Expect(s.Kube.Get(ctx, client.ObjectKeyFromObject(old), old)).To(Succeed(), id)
		g.Expect(metav1.GetControllerOf(old)).To(HaveField("Kind", eventingauth.KymaKind.Kind), id)
		conn := &corev1.Secret{}
		g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: id + "-ias"}, conn)).To(Succeed(), id)
		g.Expect(conn.OwnerReferences).To(ConsistOf(HaveField("Kind", eventingauth.KymaKind.Kind)), id)
	}
	for _, l := range []client.ObjectList{&iasv1alpha1.IASApplicationList{}, &runtimev1alpha1.RuntimeSecretList{}} {
		g.Expect(s.Kube.List(ctx, l, client.InNamespace(localstack.KCPNamespace))).To(Succeed())
		g.Expect(l).To(HaveField("Items", BeEmpty()), "%T left", l)
	}
	g.Expect(runtimeStates(g, ctx, s, ids)).To(Equal(before), "a runtime Secret or an IAS app changed on the way back")
	g.Expect(iasWrites(s)).To(Equal(unchanged), "IAS was changed on the way back")

	if bin := os.Getenv("E2E_OPERATOR"); bin != "" {
		operatorServes(t, g, ctx, s, proxy, bin)
		unchanged = iasWrites(s)
	} else {
		t.Log("E2E_OPERATOR is not set: eventing-auth-manager itself does not run here")
	}

	// Forward again, the operator gone: the Configuration installed again, the
	// provider takes every runtime up from what it kept, and the migration
	// removes the operator's EventingAuths.
	reinstall()
	g.Eventually(func(g Gomega) {
		expectReady(g, ctx, s, ids)
		g.Expect(runtimeStates(g, ctx, s, ids)).To(Equal(before))
	}, timeout, interval).Should(Succeed())
	got, code = runMigrate("--operator-deployment=kcp-system/eventing-auth-manager-controller-manager",
		"--"+migrate.OperatorGlobalAccountFlag+"="+localstack.PlatformGlobalAccount, "--wait=3m")
	g.Expect(code).To(Equal(0), got)
	g.Expect(got).To(ContainSubstring("3 runtimes of eventing-auth-manager: 3 completed"))
	for _, id := range ids {
		g.Expect(exists(ctx, s, named(migrate.OperatorEventingAuthGroupVersionKind, id))).To(BeFalse(), id)
	}
	g.Expect(runtimeStates(g, ctx, s, ids)).To(Equal(before), "a runtime Secret or an IAS app changed on the way forward")
	g.Expect(iasWrites(s)).To(Equal(unchanged), "IAS was changed on the way forward")

	// The provider serves a new Kyma CR and a deletion again.
	fresh := addRuntimes(g, ctx, s, proxy, "runtime-forward", 1, "ga-back")
	g.Eventually(func(g Gomega) { expectReady(g, ctx, s, fresh) }, timeout, interval).Should(Succeed())
	expectOnRuntimeOf(g, ctx, s, fresh[0])
	g.Expect(s.Kube.Delete(ctx, named(eventingauth.KymaKind, ids[0]))).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := s.RuntimeKube.Get(ctx, types.NamespacedName{Namespace: ids[0], Name: "eventing-webhook-auth"}, &corev1.Secret{})
		g.Expect(kerrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Expect(s.Sim.AppsNamed(ids[0])).To(BeEmpty())
	}, timeout, interval).Should(Succeed())
}

// operatorServes runs eventing-auth-manager (bin) as the benchmarks do, checks
// that it takes the runtimes handed back as they are and serves a new Kyma CR
// and a deletion, and stops it.
func operatorServes(t *testing.T, g Gomega, ctx context.Context, s *localstack.Stack, proxy *runtimeProxy, bin string) {
	log := filepath.Join(s.Work, "eventing-auth-manager.log")
	f, err := os.Create(log)
	g.Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	cmd := exec.CommandContext(ctx, bin, "--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0")
	// The stack's IAS credentials Secret has the operator's name and keys;
	// the simulator's CA is the stack's.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.MgmtKubeconfig, "SSL_CERT_FILE="+s.SimCAFile())
	cmd.Stdout, cmd.Stderr = f, f
	g.Expect(cmd.Start()).To(Succeed())
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log)
			t.Logf("eventing-auth-manager's log:\n%s", b)
		}
	}()
	const timeout, interval = 2 * time.Minute, 500 * time.Millisecond
	// A new runtime: the operator makes its app and Secret.
	id := addRuntimes(g, ctx, s, proxy, "runtime-operator", 1, "ga-back")[0]
	g.Eventually(func(g Gomega) {
		sec := &corev1.Secret{}
		g.Expect(s.RuntimeKube.Get(ctx, types.NamespacedName{Namespace: id, Name: "eventing-webhook-auth"}, sec)).To(Succeed())
		g.Expect(s.Sim.AppsNamed(id)).To(HaveLen(1))
	}, timeout, interval).Should(Succeed())
	// A deleted runtime: the operator deletes its app and Secret.
	g.Expect(s.Kube.Delete(ctx, named(eventingauth.KymaKind, id))).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := s.RuntimeKube.Get(ctx, types.NamespacedName{Namespace: id, Name: "eventing-webhook-auth"}, &corev1.Secret{})
		g.Expect(kerrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Expect(s.Sim.AppsNamed(id)).To(BeEmpty())
	}, timeout, interval).Should(Succeed())
	l, _ := os.ReadFile(log)
	g.Expect(bytes.Contains(l, []byte("Application secret already exists"))).To(BeTrue(), "the operator did not take up the runtimes handed back")
}
