//go:build e2e

package e2e

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// runtimeSecret is where the provider writes a runtime's credentials.
var runtimeSecret = client.ObjectKey{Namespace: "kyma-system", Name: "eventing-webhook-auth"}

// expectOnRuntime waits until the runtime's Secret holds what the connection
// Secret of runtime id holds, and returns both.
func expectOnRuntime(g Gomega, ctx context.Context, s *localstack.Stack, id string, timeout time.Duration) (conn, onRuntime *corev1.Secret) {
	conn, onRuntime = &corev1.Secret{}, &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: id + "-ias"}, conn)).To(Succeed())
		g.Expect(s.RuntimeKube.Get(ctx, runtimeSecret, onRuntime)).To(Succeed())
		g.Expect(onRuntime.Data).To(Equal(conn.Data))
	}, timeout, 250*time.Millisecond).Should(Succeed())
	return conn, onRuntime
}

// kubectlOnRuntime runs kubectl in the runtime's kyma-system namespace, as a
// person with access to the runtime does.
func kubectlOnRuntime(g Gomega, ctx context.Context, s *localstack.Stack, args ...string) {
	out, err := exec.CommandContext(ctx, filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"),
		append([]string{"--kubeconfig", s.RuntimeKubeconfig, "-n", "kyma-system"}, args...)...).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "kubectl %v: %s", args, out)
}

// addRuntimes makes n runtimes named prefix-00, prefix-01, ... as the
// landscape has them: a namespace on the shared runtime (reached through
// proxy under the runtime's ID), the kubeconfig Secret and the Kyma CR.
func addRuntimes(g Gomega, ctx context.Context, s *localstack.Stack, proxy *runtimeProxy, prefix string, n int, globalAccount string) []string {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-%02d", prefix, i)
		ids = append(ids, id)
		g.Expect(s.RuntimeKube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: id}})).To(Succeed())
		g.Expect(s.Kube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + id, Namespace: localstack.KCPNamespace},
			Data: map[string][]byte{"config": proxy.kubeconfig(id)}})).To(Succeed())
		_, err := s.CreateKyma(ctx, id, globalAccount)
		g.Expect(err).NotTo(HaveOccurred())
	}
	return ids
}

// expectReady checks that the EventingAuth of every runtime is Ready.
func expectReady(g Gomega, ctx context.Context, s *localstack.Stack, ids []string) {
	for _, id := range ids {
		xr := composite(id)
		g.Expect(s.Kube.Get(ctx, client.ObjectKeyFromObject(xr), xr)).To(Succeed())
		g.Expect(localstack.Condition(xr, "Ready")).To(Equal("True"), "%s: %v", id, xr.Object["status"])
	}
}

// runtimeState is what a runtime holds and IAS knows of it: what an upgrade
// or a reinstall must not change.
type runtimeState struct {
	appID, clientID, secretValue, secretVersion string
	secretIDs                                   []string
}

// runtimeStates reads the state of every runtime of ids: each has one app.
func runtimeStates(g Gomega, ctx context.Context, s *localstack.Stack, ids []string) map[string]runtimeState {
	out := map[string]runtimeState{}
	for _, id := range ids {
		apps := s.Sim.AppsNamed(id)
		g.Expect(apps).To(HaveLen(1), id)
		onRuntime := &corev1.Secret{}
		g.Expect(s.RuntimeKube.Get(ctx, types.NamespacedName{Namespace: id, Name: "eventing-webhook-auth"}, onRuntime)).To(Succeed())
		out[id] = runtimeState{appID: apps[0].ID, secretIDs: secretIDs(apps[0]), secretVersion: onRuntime.ResourceVersion,
			clientID: string(onRuntime.Data["client_id"]), secretValue: string(onRuntime.Data["client_secret"])}
	}
	return out
}

// migrateCommand builds eventing-auth-migrate as a user builds it (make
// build, with the FIPS module, which it checks) and returns a function that
// runs it FIPS-only against the stack's management cluster, with its output
// and exit code.
func migrateCommand(g Gomega, ctx context.Context, s *localstack.Stack) func(args ...string) (string, int) {
	root, err := localstack.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	build := exec.CommandContext(ctx, "make", "-s", "build")
	build.Dir = root
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	bin := filepath.Join(root, "bin", "eventing-auth-migrate")
	info, err := buildinfo.ReadFile(bin)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info.Settings).To(ContainElement(And(HaveField("Key", "GOFIPS140"), HaveField("Value", HavePrefix("v1.0.0")))),
		"eventing-auth-migrate is not built with the FIPS module")
	return func(args ...string) (string, int) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+s.MgmtKubeconfig, "GODEBUG=fips140=only")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		g.Expect(err).NotTo(HaveOccurred(), string(out))
		return string(out), 0
	}
}

// iasWrites counts the requests that change IAS (apps and api secrets
// created, patched or deleted) the simulator answered so far.
func iasWrites(s *localstack.Stack) iassim.Stats {
	out := iassim.Stats{}
	for op, codes := range s.Sim.Stats() {
		switch op {
		case operation.CreateApplication, operation.PatchApplication, operation.UpdateApplication, operation.DeleteApplication,
			operation.CreateAPISecret, operation.DeleteAPISecret:
			out[op] = codes
		}
	}
	return out
}

// removeConfiguration deletes the EventingAuth Configuration, as `kubectl
// delete configuration` does, and waits until Crossplane marks the
// EventingAuth XRD's deletion. It returns what installs the Configuration
// again, as it was, once its deletion is through.
func removeConfiguration(g Gomega, ctx context.Context, s *localstack.Stack, timeout, interval time.Duration) (reinstall func()) {
	cfg := &unstructured.Unstructured{}
	cfg.SetAPIVersion("pkg.crossplane.io/v1")
	cfg.SetKind("Configuration")
	g.Expect(s.Kube.Get(ctx, client.ObjectKey{Name: configurationName}, cfg)).To(Succeed())
	spec := cfg.Object["spec"]
	g.Expect(s.Kube.Delete(ctx, cfg)).To(Succeed())
	g.Eventually(func(g Gomega) {
		xrd := &unstructured.Unstructured{}
		xrd.SetAPIVersion("apiextensions.crossplane.io/v2")
		xrd.SetKind("CompositeResourceDefinition")
		g.Expect(s.Kube.Get(ctx, client.ObjectKey{Name: "eventingauths.composite.eventingauth.kyma-project.io"}, xrd)).To(Succeed())
		g.Expect(xrd.GetDeletionTimestamp()).NotTo(BeNil())
	}, timeout, interval).Should(Succeed())
	return func() {
		again := &unstructured.Unstructured{}
		again.SetAPIVersion("pkg.crossplane.io/v1")
		again.SetKind("Configuration")
		again.SetName(configurationName)
		again.Object["spec"] = spec
		g.Eventually(func() error { return s.Kube.Create(ctx, again) }, timeout, interval).Should(Succeed(), "the Configuration is still being deleted")
	}
}

// readyRuntimes starts the stack with a short poll and n runtimes named
// prefix-NN behind a runtime proxy, and waits until every EventingAuth is
// Ready. The proxy closes with the test.
func readyRuntimes(t *testing.T, g Gomega, ctx context.Context, prefix string, n int, timeout time.Duration) (*localstack.Stack, *runtimeProxy, []string) {
	s := startStack(t, ctx, localstack.Options{ProviderArgs: []string{"--poll=10s"}})
	proxy, err := newRuntimeProxy(s.RuntimeKubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(proxy.Close)
	ids := addRuntimes(g, ctx, s, proxy, prefix, n, "ga-"+prefix)
	g.Eventually(func(g Gomega) { expectReady(g, ctx, s, ids) }, timeout, 250*time.Millisecond).Should(Succeed())
	return s, proxy, ids
}
