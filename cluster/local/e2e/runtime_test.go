//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
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
