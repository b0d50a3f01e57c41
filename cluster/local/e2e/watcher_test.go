//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"

	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
)

// TestRuntimeWatcherRepairsSecret: with the default 5-minute poll, a runtime's
// Secret deleted or edited with kubectl is put back within seconds, brought
// by the event the runtime's webhook sends, not by a poll.
func TestRuntimeWatcherRepairsSecret(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	metricsAddr, err := localstack.FreeAddr()
	g.Expect(err).NotTo(HaveOccurred())
	s := startStack(t, ctx, localstack.Options{ProviderArgs: []string{"--metrics-bind-address=" + metricsAddr}})
	const id = "3f1e2d4c-5b6a-4789-8c0d-e2e000000033"
	g.Expect(s.AddRuntime(ctx, id)).To(Succeed())
	_, err = s.CreateKyma(ctx, id, "ga-e2e")
	g.Expect(err).NotTo(HaveOccurred())

	conn, onRuntime := expectOnRuntime(g, ctx, s, id, 3*time.Minute)
	// The Secret carries the label the Watcher selects.
	g.Expect(onRuntime.Labels).To(HaveKeyWithValue("operator.kyma-project.io/watched-by", "provider-eventing-auth"))
	// The creation's echo came back and was taken.
	g.Eventually(func() float64 {
		return providerMetric(t, metricsAddr, "eventing_auth_watcher_events_received_total", "")
	}, 10*time.Second, 100*time.Millisecond).
		Should(BeNumerically(">=", 1))

	for _, step := range []struct {
		what string
		args []string
	}{
		{"deleted", []string{"delete", "secret", "eventing-webhook-auth"}},
		{"edited", []string{"patch", "secret", "eventing-webhook-auth", "-p", `{"stringData":{"client_secret":"edited by hand"}}`}},
	} {
		before := providerMetric(t, metricsAddr, "eventing_auth_runtime_secret_repairs_total", `trigger="event"`)
		start := time.Now()
		kubectlOnRuntime(g, ctx, s, step.args...)
		var took time.Duration
		g.Eventually(func(g Gomega) {
			got := &corev1.Secret{}
			g.Expect(s.RuntimeKube.Get(ctx, runtimeSecret, got)).To(Succeed())
			g.Expect(got.Data).To(Equal(conn.Data))
			took = time.Since(start)
		}, 5*time.Second, 50*time.Millisecond).Should(Succeed(), "the Secret %s on the runtime was not put back within 5s", step.what)
		t.Logf("Secret %s: put back after %s", step.what, took.Round(time.Millisecond))
		g.Expect(providerMetric(t, metricsAddr, "eventing_auth_runtime_secret_repairs_total", `trigger="event"`)).To(Equal(before+1),
			"the repair of the %s Secret was not brought by an event", step.what)
	}
	g.Expect(providerMetric(t, metricsAddr, "eventing_auth_runtime_secret_repairs_total", `trigger="poll"`)).To(BeZero())
	g.Expect(s.Watcher.Refused.Load()).To(BeZero(), "the listener refused events of a known runtime's Secret")
}

// providerMetric reads one series of the provider's metrics; labels is one
// name="value" pair or "".
func providerMetric(t *testing.T, addr, name, labels string) float64 {
	t.Helper()
	mfs, err := metricFamilies(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	mf, ok := mfs[name]
	if !ok {
		return 0
	}
	for _, m := range mf.GetMetric() {
		if labels == "" || hasLabel(m, labels) {
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}

func hasLabel(m *dto.Metric, pair string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName()+`="`+l.GetValue()+`"` == pair {
			return true
		}
	}
	return false
}
