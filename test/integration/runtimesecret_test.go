package integration

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// restored is how long drift on a runtime may last: one poll and some slack.
const restored = poll + 5*time.Second

func testRuntimeWithApplicationRef(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	a := tn.app("rt-with-app")
	appSynced := watchReasons(t, &iasv1alpha1.IASApplicationList{}, tn.ns, a.Name, xpv2.TypeSynced)
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	putKubeconfig(t, tn.ns, "rt-with-app", newKubeconfig(t, rtEnv, "rt-with-app"))

	// The only test using the default target on the shared runtime.
	newRuntimeNamespace(t, rt, "kyma-system")
	rs := &runtimev1alpha1.RuntimeSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "rt-with-app", Namespace: tn.ns},
		Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: runtimev1alpha1.RuntimeSecretParameters{
			RuntimeID:      "rt-with-app",
			ApplicationRef: &xpv2.NamespacedReference{Name: a.Name},
		}},
	}
	readiness := watchReasons(t, &runtimev1alpha1.RuntimeSecretList{}, tn.ns, rs.Name, xpv2.TypeReady)
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	waitReady(t, rs)
	g.Expect(rs.Spec.ForProvider.CredentialsSecretRef.Name).To(Equal(a.Name+"-creds"), "applicationRef resolves to the connection Secret")
	// Made with its application, it said nothing until it was Ready: no
	// Waiting status written while the application was being created. An
	// application that failed on its way (a call timed out under the
	// suite's load) is waited for out loud, as it should be.
	g.Eventually(readiness, timeout, 100*time.Millisecond).Should(ContainElement("Available"))
	if synced := appSynced(); slices.Contains(synced, string(xpv2.ReasonReconcileError)) {
		t.Logf("the IASApplication failed before it was Ready (Synced reasons %v): the RuntimeSecret's Ready reasons %v", synced, readiness())
	} else {
		g.Expect(readiness()).To(Equal([]string{"Available"}))
	}
	expectOnRuntime(t, rt, "kyma-system", "eventing-webhook-auth", connection(g, a))
	g.Expect(connection(g, a)).To(HaveLen(4))
	get(g, rs)
	g.Expect(rs.Status.AtProvider.ClusterID).To(Equal("rt-with-app"))
	g.Expect(rs.Status.AtProvider.NamespacedName).To(Equal("kyma-system/eventing-webhook-auth"))
	g.Expect(rs.Status.AtProvider.DataHash).To(Equal(runtimev1alpha1.DataHash(connection(g, a))))

	// Deleted on the runtime: back within a poll.
	g.Expect(rt.Delete(ctx, onRuntime(g, rt, "kyma-system", "eventing-webhook-auth"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(onRuntime(g, rt, "kyma-system", "eventing-webhook-auth").Data).To(Equal(connection(g, a)))
	}, restored, 200*time.Millisecond).Should(Succeed())

	// Changed on the runtime: restored within a poll, extra keys removed.
	s := onRuntime(g, rt, "kyma-system", "eventing-webhook-auth")
	s.Data["client_secret"], s.Data["extra"] = []byte("tampered"), []byte("x")
	g.Expect(rt.Update(ctx, s)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(onRuntime(g, rt, "kyma-system", "eventing-webhook-auth").Data).To(Equal(connection(g, a)))
	}, restored, 200*time.Millisecond).Should(Succeed())

	// The client secret replaced in IAS: the runtime follows.
	old := string(connection(g, a)["client_secret"])
	g.Expect(k8s.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tn.ns, Name: a.Name + "-creds"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := connection(g, a)
		g.Expect(string(c["client_secret"])).NotTo(Equal(old))
		g.Expect(onRuntime(g, rt, "kyma-system", "eventing-webhook-auth").Data).To(Equal(c))
	}, timeout, 200*time.Millisecond).Should(Succeed())
	waitReady(t, rs)

	// Deleted: the Secret leaves the runtime, the IAS app stays with its MR.
	g.Expect(k8s.Delete(ctx, rs)).To(Succeed())
	expectGone(t, k8s, rs)
	expectGone(t, rt, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kyma-system", Name: "eventing-webhook-auth"}})
	g.Expect(tn.sim.Apps()).To(HaveLen(1))
}

func testRuntimeApplicationSelector(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	a := tn.app("rt-selected")
	a.Labels = map[string]string{"runtime": "rt-selected"}
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	putKubeconfig(t, tn.ns, "rt-selected", newKubeconfig(t, rtEnv, "rt-selected"))
	newRuntimeNamespace(t, rt, tn.ns)
	rs := runtimeSecret(tn.ns, "rt-selected", "rt-selected", "")
	rs.Spec.ForProvider.CredentialsSecretRef = nil
	rs.Spec.ForProvider.ApplicationSelector = &xpv2.NamespacedSelector{MatchLabels: map[string]string{"runtime": "rt-selected"}}
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	waitReady(t, rs)
	g.Expect(rs.Spec.ForProvider.ApplicationRef.Name).To(Equal(a.Name))
	expectOnRuntime(t, rt, tn.ns, "eventing-webhook-auth", connection(g, a))
}

func testRuntimeWaiting(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := newNamespace(t)
	newRuntimeNamespace(t, rt, ns)
	rs := runtimeSecret(ns, "rt-waiting", "rt-waiting", "creds")
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	expectWaiting(t, rs, fmt.Sprintf(`the kubeconfig Secret %s/kubeconfig-rt-waiting (key "config")`, ns))

	putKubeconfig(t, ns, "rt-waiting", newKubeconfig(t, rtEnv, "rt-waiting"))
	expectWaiting(t, rs, fmt.Sprintf("the credentials Secret %s/creds", ns))

	data := putCredentials(t, ns, "creds", "waiting-client-secret-value")
	waitReady(t, rs)
	expectOnRuntime(t, rt, ns, "eventing-webhook-auth", data)
	for _, e := range eventsOf(g, rs) {
		g.Expect(e.Type).To(Equal(corev1.EventTypeNormal), "waiting raised %s: %s", e.Reason, e.Message)
	}

	// An IASApplication that cannot become Ready holds its RuntimeSecret back.
	tn := newTenant(t, ns, iassim.Options{})
	a := tn.app("rt-app-not-ready")
	a.Spec.ProviderConfigReference.Name = "missing"
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	// A RuntimeSecret made while its application is still being created
	// waits quietly (runtimesecret.QuietWait); one whose application fails
	// says at once what it waits for.
	expectSyncedFalse(t, a, "missing")
	held := runtimeSecretOfApp(ns, "rt-held", "rt-waiting", a.Name)
	held.Spec.ForProvider.Target.Name = "held"
	g.Expect(k8s.Create(ctx, held)).To(Succeed())
	expectWaiting(t, held, "the IASApplication rt-app-not-ready to become Ready")
	get(g, a)
	a.Spec.ProviderConfigReference.Name = tn.pcName
	g.Expect(k8s.Update(ctx, a)).To(Succeed())
	waitReady(t, held)
	expectOnRuntime(t, rt, ns, "held", connection(g, a))
}

func testRuntimeRefusedKubeconfigs(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	putCredentials(t, ns, "creds", "refused-client-secret-value")
	good := string(newKubeconfig(t, rtEnv, "refused"))
	user := "  user:\n"
	g := NewWithT(t)
	g.Expect(good).To(ContainSubstring(user))
	cases := map[string]struct {
		kubeconfig string
		want       string
	}{
		"exec":         {strings.Replace(good, user, user+"    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}\n", 1), "uses an exec plugin"},
		"authprovider": {strings.Replace(good, user, user+"    auth-provider: {name: oidc}\n", 1), `uses the auth-provider "oidc"`},
		"tokenfile":    {strings.Replace(good, user, user+"    tokenFile: /var/run/secrets/token\n", 1), "names a token file"},
		"certfile":     {strings.Replace(good, user, user+"    client-certificate: /etc/client.crt\n", 1), "names a client-certificate file"},
		"malformed":    {"apiVersion: v1\nclusters: [\n  - : :", "not a valid kubeconfig"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			id := "rt-refused-" + name
			putKubeconfig(t, ns, id, []byte(tc.kubeconfig))
			rs := runtimeSecret(ns, id, id, "creds")
			NewWithT(t).Expect(k8s.Create(ctx, rs)).To(Succeed())
			expectSyncedFalse(t, rs, fmt.Sprintf(`the kubeconfig in Secret %s/kubeconfig-%s (key "config"): kubeconfig refused: `, ns, id))
			expectSyncedFalse(t, rs, tc.want)
		})
	}
}

func testRuntimeUnmanagedSecret(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := newNamespace(t)
	newRuntimeNamespace(t, rt, ns)
	theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eventing-webhook-auth", Namespace: ns}, StringData: map[string]string{"made": "by hand"}}
	g.Expect(rt.Create(ctx, theirs)).To(Succeed())
	putCredentials(t, ns, "creds", "unmanaged-client-secret-value")
	putKubeconfig(t, ns, "rt-unmanaged", newKubeconfig(t, rtEnv, "rt-unmanaged"))
	rs := runtimeSecret(ns, "rt-unmanaged", "rt-unmanaged", "creds")
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	expectSyncedFalse(t, rs, fmt.Sprintf("Secret %s/eventing-webhook-auth on runtime rt-unmanaged was not created by this provider", ns))
	s, msg := condition(g, rs, xpv2.TypeReady)
	g.Expect(s).To(Equal(corev1.ConditionFalse))
	g.Expect(msg).To(ContainSubstring("it is left alone"))

	g.Expect(k8s.Delete(ctx, rs)).To(Succeed())
	expectGone(t, k8s, rs)
	left := onRuntime(g, rt, ns, "eventing-webhook-auth")
	g.Expect(left.UID).To(Equal(theirs.UID))
	g.Expect(left.Data).To(Equal(map[string][]byte{"made": []byte("by hand")}))
}

// testRuntimeDeleteChangedSecret: a deletion removes the runtime's Secret
// even when something changed it since the provider last saw it, and leaves
// it when it was taken out of the provider's hands meanwhile.
func testRuntimeDeleteChangedSecret(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := newNamespace(t)
	newRuntimeNamespace(t, rt, ns)
	putCredentials(t, ns, "creds", "changed-client-secret-value")
	cases := map[string]struct {
		change func(*corev1.Secret)
		left   bool
	}{
		"rt-annotated":   {change: func(s *corev1.Secret) { s.Annotations = map[string]string{"note": "looked at"} }},
		"rt-handed-back": {change: func(s *corev1.Secret) { delete(s.Labels, runtimev1alpha1.LabelManagedBy) }, left: true},
	}
	for id, tc := range cases {
		putKubeconfig(t, ns, id, newKubeconfig(t, rtEnv, id))
		rs := runtimeSecret(ns, id, id, "creds")
		rs.Spec.ForProvider.Target.Name = id
		g.Expect(k8s.Create(ctx, rs)).To(Succeed())
		waitReady(t, rs)
		s := onRuntime(g, rt, ns, id)
		tc.change(s)
		g.Expect(rt.Update(ctx, s)).To(Succeed())

		g.Expect(k8s.Delete(ctx, rs)).To(Succeed())
		expectGone(t, k8s, rs)
		err := rt.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{})
		g.Expect(err == nil).To(Equal(tc.left), "%s: Secret left on the runtime: %v", id, err)
	}
}

func testRuntimeTargetNamespaceMissing(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := newNamespace(t)
	data := putCredentials(t, ns, "creds", "no-namespace-client-secret-value")
	putKubeconfig(t, ns, "rt-no-ns", newKubeconfig(t, rtEnv, "rt-no-ns"))
	rs := runtimeSecret(ns, "rt-no-ns", "rt-no-ns", "creds")
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	expectSyncedFalse(t, rs, fmt.Sprintf("namespace %s does not exist on runtime rt-no-ns; the provider never creates it", ns))
	newRuntimeNamespace(t, rt, ns)
	waitReady(t, rs)
	expectOnRuntime(t, rt, ns, "eventing-webhook-auth", data)
}

func testRuntimeDeleteAfterKubeconfigRemoved(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns, rs, _ := readyRuntimeSecret(t, rtEnv, rt, "rt-gone")
	g.Expect(k8s.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-rt-gone", Namespace: ns}})).To(Succeed())
	g.Expect(k8s.Delete(ctx, rs)).To(Succeed())
	expectGone(t, k8s, rs)
	expectEvent(t, rs, "RuntimeGone")
}

func testRuntimeStoppedAndStarted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	// A runtime of its own, with a fixed certificate directory so that it comes
	// back on the same address with the same certificates.
	env := &envtest.Environment{}
	env.ControlPlane.GetAPIServer().CertDir = t.TempDir()
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	own, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())

	ns, rs, data := readyRuntimeSecret(t, env, own, "rt-restart")
	apiserver := env.ControlPlane.GetAPIServer()
	g.Expect(apiserver.Stop()).To(Succeed())
	expectSyncedFalse(t, rs, fmt.Sprintf("cannot read Secret %s/eventing-webhook-auth on runtime rt-restart", ns))
	g.Expect(apiserver.Start()).To(Succeed())
	// While it was away, the Secret was deleted: it comes back.
	g.Expect(own.Delete(ctx, onRuntime(g, own, ns, "eventing-webhook-auth"))).To(Succeed())
	waitReady(t, rs)
	expectOnRuntime(t, own, ns, "eventing-webhook-auth", data)
}

// testManyRuntimes gives 100 runtimes, each with its own kubeconfig, to a client
// cache of 10.
func testManyRuntimes(t *testing.T) {
	g := NewWithT(t)
	f := manyRuntimes(t, 100)
	g.Expect(f.peak).To(BeNumerically("<=", runtimeCacheSize), "the cache held more clients than its size")
	g.Expect(runtimes.Stats().Len).To(BeNumerically("<=", runtimeCacheSize))
	g.Expect(f.built).To(BeNumerically(">=", f.n), "every kubeconfig got its own client")
	g.Expect(f.evicted).To(BeNumerically(">=", f.n-runtimeCacheSize))
	t.Logf("%d RuntimeSecrets with distinct kubeconfigs, cache of %d: all Ready in %s; clients built %d, evicted %d, peak %d",
		f.n, runtimeCacheSize, f.elapsed, f.built, f.evicted, f.peak)
}

// runtimeFigures are what manyRuntimes measured.
type runtimeFigures struct {
	n, built, evicted, peak int
	elapsed                 time.Duration
}

// manyRuntimes creates n RuntimeSecrets, each with a kubeconfig of its own for
// the shared runtime, and waits until all are Ready and their Secrets written.
func manyRuntimes(t testing.TB, n int) runtimeFigures {
	g := NewWithT(t)
	ns := newNamespace(t)
	newRuntimeNamespace(t, rt, ns)
	data := putCredentials(t, ns, "creds", "many-client-secret-value-"+ns)
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("rt-many-%03d", i)
		putKubeconfig(t, ns, ids[i], newKubeconfig(t, rtEnv, ns+"-"+ids[i]))
	}
	start := time.Now()
	before := runtimes.Stats()
	var all []*runtimev1alpha1.RuntimeSecret
	for _, id := range ids {
		rs := runtimeSecret(ns, id, id, "creds")
		rs.Spec.ForProvider.Target.Name = id
		g.Expect(k8s.Create(ctx, rs)).To(Succeed())
		all = append(all, rs)
	}
	for _, rs := range all {
		waitReady(t, rs)
	}
	elapsed := time.Since(start).Round(100 * time.Millisecond)
	for _, rs := range all {
		expectOnRuntime(t, rt, ns, rs.Name, data)
	}
	st := runtimes.Stats()
	return runtimeFigures{n: n, built: st.Built - before.Built, evicted: st.Evicted - before.Evicted, peak: st.Peak, elapsed: elapsed}
}

// watchReasons watches the object ns/name of list's kind from before it
// exists and returns a function that tells the reasons of its condition ct
// that its statuses went through so far, each change once.
func watchReasons(t *testing.T, list client.ObjectList, ns, name string, ct xpv2.ConditionType) func() []string {
	t.Helper()
	wc, err := client.NewWithWatch(mgmtConfig, client.Options{Scheme: k8s.Scheme()})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, list, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var reasons []string
	go func() {
		for e := range w.ResultChan() {
			o, ok := e.Object.(interface {
				GetCondition(xpv2.ConditionType) xpv2.Condition
			})
			if !ok {
				continue
			}
			r := string(o.GetCondition(ct).Reason)
			mu.Lock()
			if r != "" && (len(reasons) == 0 || reasons[len(reasons)-1] != r) {
				reasons = append(reasons, r)
			}
			mu.Unlock()
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reasons)
	}
}
