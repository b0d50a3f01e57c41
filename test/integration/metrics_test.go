package integration

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// scrape reads the provider's metrics as Prometheus would, one value per
// series, keyed `name{label="value",...}` with the labels sorted.
func scrape(g Gomega) map[string]float64 {
	mfs, err := metrics.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			sort.Strings(labels)
			key := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// stateOf is a crossplane-runtime MR state metric of one kind.
func stateOf(m map[string]float64, name, kind string) float64 {
	for k, v := range m {
		if strings.HasPrefix(k, name+"{") && strings.Contains(k, "Kind="+kind+`"`) {
			return v
		}
	}
	return -1
}

// testCredentialsInView scripts a lifecycle (create, rotate, retire, expire
// soon, an unreachable runtime, IAS failing a rotation) and checks every
// metric a platform team watches, with the values the resources' status
// implies. It runs alone, before any other scenario, so that the counts are
// its resources' only.
func testCredentialsInView(t *testing.T) {
	g := NewWithT(t)
	start := time.Now()
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	// Exported once the IASApplication controller is set up, which waits for
	// its CRDs: on a busy machine that can come after this test starts.
	g.Eventually(func(g Gomega) {
		g.Expect(scrape(g)).To(HaveKeyWithValue(`eventing_auth_client_secrets{expires_in="7d"}`, 0.0))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	// Rotates about eight seconds after each secret is made; its one
	// RuntimeSecret's runtime refuses connections, so a retired secret waits.
	rotating := tn.app("creds-rotating")
	rotating.Spec.ForProvider.Secret.ValidFor = &metav1.Duration{Duration: time.Hour}
	rotating.Spec.ForProvider.Secret.RotateBefore = &metav1.Duration{Duration: time.Hour - 8*time.Second}
	rotating.Spec.ForProvider.Secret.RetireAfter = &metav1.Duration{Duration: time.Second}
	g.Expect(k8s.Create(ctx, rotating)).To(Succeed())
	newRuntimeNamespace(t, rt, tn.ns)
	putKubeconfig(t, tn.ns, "creds-unreachable", newKubeconfig(t, rtEnv, "creds-unreachable"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	refused := l.Addr().String()
	g.Expect(l.Close()).To(Succeed())
	pointAt(t, tn.ns, "creds-unreachable", "https://"+refused)
	rs := runtimeSecretOfApp(tn.ns, "creds-unreachable", "creds-unreachable", rotating.Name)
	rs.Spec.ForProvider.Target.Namespace = tn.ns
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())

	// Valid for 90 days, never rotated.
	steady := tn.app("creds-steady")
	steady.Spec.ForProvider.Secret.ValidFor = &metav1.Duration{Duration: 60 * 24 * time.Hour}
	g.Expect(k8s.Create(ctx, steady)).To(Succeed())
	waitReady(t, rotating)
	waitReady(t, steady)

	// Rotated once; the successor is due again at once but waits, since the
	// older secret waits for the unreachable runtime.
	g.Eventually(func(g Gomega) {
		m := scrape(g)
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_secret_rotations_total{result="succeeded"}`, 1.0))
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_secret_rotations_total{result="failed"}`, 0.0))
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_client_secrets{expires_in="7d"}`, 1.0))
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_client_secrets{expires_in="90d"}`, 1.0))
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_secret_rotations_overdue{}`, 1.0))
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_secret_retirements{waiting_for="runtimes"}`, 1.0))
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_secret_retirements{waiting_for="time"}`, 0.0))
		g.Expect(m[`eventing_auth_secret_retirement_oldest_seconds{waiting_for="runtimes"}`]).To(BeNumerically(">", 0))
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_circuits_open{kind="runtime"}`, 1.0))
		g.Expect(m[`eventing_auth_ias_last_success_timestamp_seconds{tenant="`+tn.sim.URL+`"}`]).To(BeNumerically(">=", float64(start.Unix())))
		// crossplane-runtime's MR state metrics: both apps exist, are Ready
		// and Synced; the RuntimeSecret exists and is neither.
		g.Expect(stateOf(m, "crossplane_managed_resource_exists", "IASApplication")).To(Equal(2.0))
		g.Expect(stateOf(m, "crossplane_managed_resource_ready", "IASApplication")).To(Equal(2.0))
		g.Expect(stateOf(m, "crossplane_managed_resource_synced", "IASApplication")).To(Equal(2.0))
		g.Expect(stateOf(m, "crossplane_managed_resource_exists", "RuntimeSecret")).To(Equal(1.0))
		g.Expect(stateOf(m, "crossplane_managed_resource_ready", "RuntimeSecret")).To(Equal(0.0))
	}, timeout, 500*time.Millisecond).Should(Succeed())
	expectCondition(t, rotating, iasapplication.TypeRotation, corev1.ConditionFalse, "Rotation waits")

	// IAS refuses new secrets: the next due rotation fails and says so.
	failing := tn.app("creds-failing")
	failing.Spec.ForProvider.Secret.ValidFor = &metav1.Duration{Duration: time.Hour}
	failing.Spec.ForProvider.Secret.RotateBefore = &metav1.Duration{Duration: time.Hour - 5*time.Second}
	g.Expect(k8s.Create(ctx, failing)).To(Succeed())
	waitReady(t, failing)
	tn.sim.InjectFault(iassim.Fault{Kind: iassim.Fault500, Operation: operation.CreateAPISecret, Rate: 1})
	expectCondition(t, failing, iasapplication.TypeRotation, corev1.ConditionFalse, "Cannot rotate")
	expectEvent(t, failing, "RotationFailed")
	g.Eventually(func(g Gomega) {
		m := scrape(g)
		g.Expect(m[`eventing_auth_secret_rotations_total{result="failed"}`]).To(BeNumerically(">=", 1))
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_secret_rotations_overdue{}`, 2.0))
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_client_secrets{expires_in="7d"}`, 2.0))
		// A due secret still works: the failing app stays Ready, not Synced.
		g.Expect(stateOf(m, "crossplane_managed_resource_ready", "IASApplication")).To(Equal(3.0))
		g.Expect(stateOf(m, "crossplane_managed_resource_synced", "IASApplication")).To(Equal(2.0))
	}, timeout, 500*time.Millisecond).Should(Succeed())

	// Cleaned up, the counts go back to nothing.
	tn.sim.ClearFaults()
	for _, o := range []managedObject{rs, rotating, steady, failing} {
		g.Expect(k8s.Delete(ctx, o)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		m := scrape(g)
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_client_secrets{expires_in="7d"}`, 0.0))
		g.Expect(m).To(HaveKeyWithValue(`eventing_auth_secret_retirements{waiting_for="runtimes"}`, 0.0))
		g.Expect(stateOf(m, "crossplane_managed_resource_exists", "IASApplication")).To(Equal(0.0))
	}, 2*timeout, 500*time.Millisecond).Should(Succeed())
}

// expectCondition waits for a condition of the given status whose message
// holds want.
func expectCondition(t *testing.T, a managedObject, ct xpv2.ConditionType, status corev1.ConditionStatus, want string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		s, msg := condition(g, a, ct)
		g.Expect(s).To(Equal(status))
		g.Expect(msg).To(ContainSubstring(want))
	}, timeout, 200*time.Millisecond).Should(Succeed())
}

// testMetricsTable: the metrics table of the docs' Monitoring section (which
// the dashboard test holds the dashboard's queries to) lists what the provider
// exports: every metric it names was exported during this suite, and every
// eventing_auth_ metric exported is in it. It runs last, when every scenario
// has set its metrics.
func testMetricsTable(t *testing.T) {
	g := NewWithT(t)
	exported := map[string]bool{}
	for _, reg := range []prometheus.Gatherer{metrics, ctrlmetrics.Registry} {
		mfs, err := reg.Gather()
		g.Expect(err).NotTo(HaveOccurred())
		for _, mf := range mfs {
			exported[mf.GetName()] = true
		}
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	g.Expect(err).NotTo(HaveOccurred())
	doc := string(raw)
	start := strings.Index(doc, "\n## Monitoring\n")
	g.Expect(start).To(BeNumerically(">", 0), "docs/operations.md has a Monitoring section")
	documented := map[string]bool{}
	for _, line := range strings.Split(doc[start:], "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(strings.SplitN(line, "|", 3)[1], -1) {
			documented[m[1]] = true
		}
	}
	for name := range documented {
		g.Expect(exported).To(HaveKey(name), "docs/operations.md lists %s, which the provider did not export", name)
	}
	for name := range exported {
		if strings.HasPrefix(name, "eventing_auth_") {
			g.Expect(documented).To(HaveKey(name), "the provider exports %s, which docs/operations.md does not list", name)
		}
	}
}
