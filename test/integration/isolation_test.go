package integration

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/testnet"
)

// testTenantHangsThenRecovers: an IAS tenant that accepts requests and answers
// nothing makes its resources say so (timeout, the tenant, the next try) and
// an event, gets few calls while it hangs, and is served again once it answers.
func testTenantHangsThenRecovers(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{HoldFor: time.Minute})
	tn.sim.InjectFault(iassim.Fault{Kind: iassim.FaultTimeout, Rate: 1})
	apps := make([]managedObject, 3)
	for i := range apps {
		a := tn.app(fmt.Sprintf("runtime-hung-%d", i))
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
		apps[i] = a
	}
	start := time.Now()
	for _, a := range apps {
		expectSyncedFalse(t, a, "IAS tenant "+tn.sim.URL)
		expectSyncedFalse(t, a, "timeout")
		expectSyncedFalse(t, a, "next try at")
	}
	g.Expect(time.Since(start)).To(BeNumerically("<", 30*time.Second), "the cause was named within 30s")
	expectEvent(t, apps[0], "CannotObserveExternalResource")

	// While it hangs, three resources cost the tenant a few calls, not three per retry.
	tn.sim.ResetStats()
	time.Sleep(20 * time.Second)
	calls := len(tn.sim.Requests())
	g.Expect(calls).To(BeNumerically("<=", 4), "calls to the hung tenant in 20s")

	tn.sim.ClearFaults()
	back := time.Now()
	for _, a := range apps {
		waitReady(t, a)
	}
	g.Expect(time.Since(back)).To(BeNumerically("<=", time.Minute+5*time.Second), "served again within one backoff step")
	t.Logf("hung tenant: %d calls in 20s; all Ready %s after it answered again", calls, time.Since(back).Round(time.Second))
}

// testRuntimeRefusesThenRecovers: a runtime that refuses connections says so
// with the next try, and is served again within a backoff step once it listens.
func testRuntimeRefusesThenRecovers(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns, rs, data := readyRuntimeSecret(t, rtEnv, rt, "rt-refuses")
	// A port that refuses, then a proxy on it to the runtime.
	addr := testnet.RefusingAddr(t)
	pointAt(t, ns, "rt-refuses", "https://"+addr)
	expectSyncedFalse(t, rs, "runtime API server https://"+addr+" ")
	expectSyncedFalse(t, rs, "connection refused")
	expectSyncedFalse(t, rs, "next try at")

	// It comes back, without its Secret.
	g.Expect(rt.Delete(ctx, onRuntime(g, rt, ns, "eventing-webhook-auth"))).To(Succeed())
	defer testnet.ProxyAt(t, addr, rtEnv.Config.Host).Refuse()
	back := time.Now()
	waitReady(t, rs)
	expectOnRuntime(t, rt, ns, "eventing-webhook-auth", data)
	g.Expect(time.Since(back)).To(BeNumerically("<=", time.Minute+5*time.Second), "served again within one backoff step")
}

// testDeleteGoneRuntime: deleting a RuntimeSecret whose runtime never answers
// again completes after the configured time with a Warning event naming the
// Secret that may be left; its IASApplication then goes, and its app in IAS.
func testDeleteGoneRuntime(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	newRuntimeNamespace(t, rt, tn.ns)
	putKubeconfig(t, tn.ns, "rt-gone", newKubeconfig(t, rtEnv, "rt-gone"))
	a := tn.app("rt-gone")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	rs := &runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rt-gone", Namespace: tn.ns},
		Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: runtimev1alpha1.RuntimeSecretParameters{
			RuntimeID: "rt-gone", ApplicationRef: &xpv2.NamespacedReference{Name: a.Name},
			Target: runtimev1alpha1.TargetSecret{Namespace: tn.ns, Name: "eventing-webhook-auth"}}}}
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	waitReady(t, a)
	waitReady(t, rs)
	id := meta.GetExternalName(get(g, a))

	// The runtime goes away for good: it accepts connections and never answers.
	pointAt(t, tn.ns, "rt-gone", "https://"+testnet.Hang(t).Addr)
	expectSyncedFalse(t, rs, "timeout")
	deleted := time.Now()
	g.Expect(k8s.Delete(ctx, rs)).To(Succeed())
	g.Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(rs), rs) }, unreachableDeletion/2, time.Second).
		Should(Succeed(), "the deletion gave up on the runtime before its time")
	g.Eventually(func() bool { return kerrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(rs), rs)) }, timeout, 200*time.Millisecond).
		Should(BeTrue(), "the deletion never completed")
	g.Expect(time.Since(deleted)).To(BeNumerically(">=", unreachableDeletion))
	g.Eventually(func(g Gomega) {
		var found bool
		for _, e := range eventsOf(g, rs) {
			if e.Reason == "DeletedWhileRuntimeUnreachable" && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Message, "Secret "+tn.ns+"/eventing-webhook-auth may be left on that runtime") {
				found = true
			}
		}
		g.Expect(found).To(BeTrue())
	}, timeout, 200*time.Millisecond).Should(Succeed())

	g.Expect(k8s.Delete(ctx, a)).To(Succeed())
	g.Eventually(func() bool { _, ok := tn.sim.App(id); return ok }, timeout, 200*time.Millisecond).Should(BeFalse(), "the IAS app was left")
}

// testCredentialsRejected: a wrong password costs one failed logon, not one per
// resource and retry; every resource and the ProviderConfig say so; the fixed
// password is used at once.
func testCredentialsRejected(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	wrong := "wrong-" + tn.password
	secrets.add(nil, wrong)
	tn.writeCreds(t, map[string]string{"username": tn.username, "password": wrong, "url": tn.sim.URL})
	apps := make([]managedObject, 5)
	for i := range apps {
		a := tn.app(fmt.Sprintf("runtime-rejected-%d", i))
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
		apps[i] = a
	}
	for _, a := range apps {
		expectSyncedFalse(t, a, "rejected the credentials")
	}
	time.Sleep(10 * time.Second)
	failed := 0
	for _, r := range tn.sim.Requests() {
		if r.Status == 401 {
			failed++
		}
	}
	g.Expect(failed).To(Equal(1), "failed logons")
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: tn.pcName, Namespace: tn.ns}}
	g.Eventually(func(g Gomega) {
		l := &corev1.EventList{}
		g.Expect(k8s.List(ctx, l, client.InNamespace(tn.ns))).To(Succeed())
		var reasons []string
		for _, e := range l.Items {
			if e.InvolvedObject.Kind == "ProviderConfig" && e.InvolvedObject.Name == pc.Name {
				reasons = append(reasons, e.Reason)
			}
		}
		g.Expect(reasons).To(ContainElement("CredentialsRejected"))
	}, timeout, 200*time.Millisecond).Should(Succeed())

	// The right password, written now, is one IAS has not accepted yet: it is
	// tried once the backoff after the rejection ends, not before.
	tn.writeCreds(t, map[string]string{"username": tn.username, "password": tn.password, "url": tn.sim.URL})
	expectSyncedFalse(t, apps[0], "no other password of the user that IAS has not accepted yet is tried from this namespace before")
	for _, a := range apps {
		waitReady(t, a)
	}
	failed = 0
	for _, r := range tn.sim.Requests() {
		if r.Status == 401 {
			failed++
		}
	}
	g.Expect(failed).To(Equal(1), "failed logons")
}

// pointAt points a runtime's kubeconfig at another server, keeping its TLS
// settings and credentials.
func pointAt(t *testing.T, ns, runtimeID, server string) {
	t.Helper()
	pointAtWithCA(t, ns, runtimeID, server, nil)
}

// pointAtWithCA points a runtime's kubeconfig at another server, trusting
// the PEM CA ca instead of the runtime's if it is set.
func pointAtWithCA(t *testing.T, ns, runtimeID, server string, ca []byte) {
	t.Helper()
	g := NewWithT(t)
	s := &corev1.Secret{}
	// The cache may not hold a Secret created a moment ago.
	g.Eventually(func() error { return k8s.Get(ctx, clientKey(ns, "kubeconfig-"+runtimeID), s) }, timeout, 100*time.Millisecond).Should(Succeed())
	cfg, err := clientcmd.Load(s.Data["config"])
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range cfg.Clusters {
		c.Server = server
		if ca != nil {
			c.CertificateAuthorityData = ca
		}
	}
	s.Data["config"], err = clientcmd.Write(*cfg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8s.Update(ctx, s)).To(Succeed())
}

// testRuntimeRedirects: a runtime's API server that answers with a redirect
// to another host, whose certificate the same CA signed, fails the
// RuntimeSecret with a condition that says so; the other host never sees the
// runtime's token or the Secret.
func testRuntimeRedirects(t *testing.T) {
	t.Parallel()
	ns, rs, _ := readyRuntimeSecret(t, rtEnv, rt, "rt-redirects")
	var reached atomic.Int32
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer other.Close()
	redirecting := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: redirecting.Certificate().Raw})
	pointAtWithCA(t, ns, "rt-redirects", redirecting.URL, ca)
	expectSyncedFalse(t, rs, "a redirect to another address, not followed")
	NewWithT(t).Consistently(reached.Load, 2*poll, 200*time.Millisecond).Should(BeZero(), "requests reached the redirect's target")
}
