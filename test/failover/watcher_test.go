package failover

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/providerstack"
	"github.com/kyma-project/provider-eventing-auth/test/support/skrwebhook"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
	"github.com/kyma-project/provider-eventing-auth/test/support/testnet"
)

// service stands in for the watcher Service in front of two replicas: it
// sends each request to the next replica in turn; one that does not answer
// gets 502, which the skr-webhook tries again (on the other).
func service(t *testing.T, backends ...string) string {
	t.Helper()
	var next atomic.Int32
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			target, _ := url.Parse("http://" + backends[int(next.Add(1))%len(backends)])
			r.SetURL(target)
			r.Out.Header["X-Forwarded-For"] = nil
		},
	}
	addr, err := testnet.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Addr: addr, Handler: proxy, ReadHeaderTimeout: 5 * time.Second}
	go srv.ListenAndServe() //nolint:errcheck // Closed below.
	t.Cleanup(func() { _ = srv.Close() })
	return addr
}

// TestKillTheLeaderLosesNoRepair: two replicas behind the watcher Service,
// each listening; the standby hands events to the leader. With the leader
// killed, a runtime Secret deleted before the standby takes the lease is back
// within 2 s of the new leader holding it.
func TestKillTheLeaderLosesNoRepair(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, which builds kube-apiserver and etcd first")
	}
	g := NewWithT(t)
	ctx := context.Background()
	work := t.TempDir()
	s, err := providerstack.Start(ctx, work, iassim.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(s.Stop)
	mgmt, rt := s.Mgmt, s.Runtime

	ca, err := testcerts.NewCA("klm-watcher CA")
	g.Expect(err).NotTo(HaveOccurred())
	caFile := filepath.Join(work, "watcher-ca.crt")
	g.Expect(os.WriteFile(caFile, ca.PEM, 0o600)).To(Succeed())
	addrA, err := testnet.FreeAddr()
	g.Expect(err).NotTo(HaveOccurred())
	addrB, err := testnet.FreeAddr()
	g.Expect(err).NotTo(HaveOccurred())
	svc := service(t, addrA, addrB)
	metricsB, err := testnet.FreeAddr()
	g.Expect(err).NotTo(HaveOccurred())
	start := func(name, addr string, more ...string) *exec.Cmd {
		// A poll far away: only an event, or the new leader's first look at
		// every resource, repairs a Secret during the test.
		cmd, err := s.Provider(name, append(more, "--leader-election", "--leader-election-namespace="+ns, "--kyma-bridge=false", "--poll=30m",
			"--runtime-watcher-address="+addr, "--runtime-watcher-advertise-address="+addr, "--runtime-watcher-client-ca="+caFile)...)
		g.Expect(err).NotTo(HaveOccurred())
		return cmd
	}
	// The first process leads; the second stands by.
	leader := start("watcher-a", addrA)
	first := holder(ctx, g, mgmt, "")
	start("watcher-b", addrB, "--metrics-bind-address="+metricsB)

	fw, err := skrwebhook.Start("http://"+svc+"/v2/"+runtimewatcher.DefaultComponent+"/event", ca, func(namespace, _ string) string { return namespace })
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(fw.Close)
	g.Expect(fw.Register(ctx, rt)).To(Succeed())

	ids := []string{"rt-a", "rt-b", "rt-c", "rt-d"}
	for _, id := range ids {
		g.Expect(rt.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: id}})).To(Succeed())
		g.Expect(mgmt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + id, Namespace: ns},
			Data: map[string][]byte{"config": s.RuntimeKubeconfig}})).To(Succeed())
		app := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns}}
		app.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: id + "-ias"})
		g.Expect(mgmt.Create(ctx, app)).To(Succeed())
		g.Expect(mgmt.Create(ctx, &runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns},
			Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: runtimev1alpha1.RuntimeSecretParameters{
				RuntimeID: id, ApplicationRef: &xpv2.NamespacedReference{Name: id},
				Target: runtimev1alpha1.TargetSecret{Namespace: id, Name: "eventing-webhook-auth"}}}})).To(Succeed())
	}
	onRuntime := func(id string) (*corev1.Secret, error) {
		sec := &corev1.Secret{}
		return sec, rt.Get(ctx, client.ObjectKey{Namespace: id, Name: "eventing-webhook-auth"}, sec)
	}
	g.Eventually(func(g Gomega) {
		for _, id := range ids {
			_, err := onRuntime(id)
			g.Expect(err).NotTo(HaveOccurred(), id)
		}
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())

	// Both replicas take events: each deletion reaches one or the other
	// through the Service, and the leader repairs it at once.
	for _, id := range ids[:2] {
		sec, _ := onRuntime(id)
		g.Expect(rt.Delete(ctx, sec)).To(Succeed())
		g.Eventually(func() error { _, err := onRuntime(id); return err }, 2*time.Second, 50*time.Millisecond).Should(Succeed(),
			"%s's Secret not back within 2 s, with both replicas up", id)
	}

	// The standby forwarded what the Service sent it.
	g.Expect(handed(g, metricsB, "forwarded")).To(BeNumerically(">=", 1), "the standby forwarded no event")

	// The leader dies without a word; a Secret is deleted before the standby
	// takes the lease.
	g.Expect(leader.Process.Kill()).To(Succeed())
	sec, _ := onRuntime(ids[2])
	g.Expect(rt.Delete(ctx, sec)).To(Succeed())
	second := holder(ctx, g, mgmt, first)
	took := time.Now()
	g.Eventually(func() error { _, err := onRuntime(ids[2]); return err }, 2*time.Second, 50*time.Millisecond).Should(Succeed(),
		"the Secret deleted during the failover is not back within 2 s of %s holding the lease", second)
	t.Logf("the Secret deleted during the failover was back %s after the new leader held the lease", time.Since(took).Round(10*time.Millisecond))
	g.Expect(handed(g, metricsB, "held")).To(BeNumerically(">=", 1), "the standby held no event while no leader answered")
	g.Expect(handed(g, metricsB, "replayed")).To(Equal(handed(g, metricsB, "held")), "the new leader did not replay what it held")

	// The new leader alone takes the next one.
	sec, _ = onRuntime(ids[3])
	g.Expect(rt.Delete(ctx, sec)).To(Succeed())
	g.Eventually(func() error { _, err := onRuntime(ids[3]); return err }, 2*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(fmt.Sprint(fw.Refused.Load())).To(Equal("0"), "events the replicas refused")
}

// handed reads eventing_auth_watcher_events_handed_total{how} of the
// provider whose metrics are at addr.
func handed(g Gomega, addr, how string) float64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close() //nolint:errcheck // Read below.
	b, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, `eventing_auth_watcher_events_handed_total{how="`+how+`"} `); ok {
			f, err := strconv.ParseFloat(v, 64)
			g.Expect(err).NotTo(HaveOccurred())
			return f
		}
	}
	return 0
}
