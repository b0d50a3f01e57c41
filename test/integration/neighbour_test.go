package integration

import (
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/testnet"
)

// platformConfig is a ClusterProviderConfig with tn's credentials that admits
// tn's namespace, and a constructor of IASApplications that use it.
func platformConfig(t *testing.T, tn *tenant) (*v1alpha1.ClusterProviderConfig, func(name string) *iasv1alpha1.IASApplication) {
	t.Helper()
	cpc := &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "platform-" + tn.ns},
		Spec: v1alpha1.ClusterProviderConfigSpec{
			Credentials: v1alpha1.ClusterCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.SecretReference{Name: tn.secret, Namespace: tn.ns}},
			Namespaces:  []string{tn.ns},
		},
	}
	NewWithT(t).Expect(k8s.Create(ctx, cpc)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(ctx, cpc) })
	return cpc, func(name string) *iasv1alpha1.IASApplication {
		a := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tn.ns}}
		a.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: cpc.Name})
		a.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: name + "-creds"})
		return a
	}
}

// failedLogons counts the 401s a simulated tenant answered.
func failedLogons(sim *iassim.Running) int {
	n := 0
	for _, r := range sim.Requests() {
		if r.Status == 401 {
			n++
		}
	}
	return n
}

// testNeighbourNeverHoldsThePlatformsLogons: a namespace's ProviderConfigs
// with the platform's username and wrong passwords, the tenant URL written
// with its port in leading zeros, upper case and a trailing slash, are refused
// before any call: IAS sees no failed logon, and the platform's new resources
// become Ready as before. Then the platform's password is rotated in IAS: its
// stale password is rejected once and the new one, written into the Secret,
// is used at once.
func testNeighbourNeverHoldsThePlatformsLogons(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	platform := newTenant(t, newNamespace(t), iassim.Options{})
	_, onPlatform := platformConfig(t, platform)
	first := onPlatform("runtime-platform-0")
	g.Expect(k8s.Create(ctx, first)).To(Succeed())
	waitReady(t, first)

	tenantB := newNamespace(t)
	host, port, _ := strings.Cut(strings.TrimPrefix(platform.sim.URL, "http://"), ":")
	spellings := []string{platform.sim.URL, "http://" + host + ":00" + port, strings.ToUpper(platform.sim.URL) + "/", "http://" + host + ":" + port + "/"}
	var hostile []*iasv1alpha1.IASApplication
	for i, url := range spellings {
		name := fmt.Sprintf("ias-guess-%d", i)
		password := fmt.Sprintf("guess-%d-%s", i, platform.password)
		secrets.add(nil, password)
		g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenantB},
			StringData: map[string]string{"username": strings.ToUpper(platform.username), "password": password, "url": url}})).To(Succeed())
		g.Expect(k8s.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenantB},
			Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.LocalSecretReference{Name: name}}}})).To(Succeed())
		a := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "runtime-guess-" + name, Namespace: tenantB}}
		a.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: name})
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
		hostile = append(hostile, a)
	}
	for _, a := range hostile {
		expectSyncedFalse(t, a, "may not log on as a platform user")
	}
	start := time.Now()
	next := onPlatform("runtime-platform-1")
	g.Expect(k8s.Create(ctx, next)).To(Succeed())
	waitReadyWithin(t, next, 15*time.Second)
	t.Logf("a new platform resource Ready %v after its creation, beside the neighbour", time.Since(start))
	g.Expect(failedLogons(platform.sim)).To(BeZero(), "failed logons of the platform's user")

	// A rotation: IAS takes the new password first, the Secret follows.
	rotated := "rotated-" + platform.password
	secrets.add(nil, rotated)
	platform.sim.SetCredentials(platform.username, rotated)
	stale := onPlatform("runtime-platform-stale")
	g.Expect(k8s.Create(ctx, stale)).To(Succeed())
	expectSyncedFalse(t, stale, "rejected the credentials")
	platform.writeCreds(t, map[string]string{"username": platform.username, "password": rotated, "url": platform.sim.URL})
	start = time.Now()
	waitReadyWithin(t, stale, 45*time.Second)
	t.Logf("the platform's resource Ready %v after the rotated password was written", time.Since(start))
	g.Expect(failedLogons(platform.sim)).To(Equal(1), "failed logons of the platform's user: the stale password once")
}

// waitReadyWithin waits for a resource to be Ready, failing after d with the
// provider's log lines about it.
func waitReadyWithin(t *testing.T, a managedObject, d time.Duration) {
	t.Helper()
	defer tellLogLinesOnFailure(t, a)
	NewWithT(t).Eventually(func(g Gomega) {
		get(g, a)
		g.Expect(a.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue), "Ready: %s; Synced: %s",
			a.GetCondition(xpv2.TypeReady).Message, a.GetCondition(xpv2.TypeSynced).Message)
	}, d, 100*time.Millisecond).Should(Succeed(), "%s not Ready within %v", a.GetName(), d)
}

// tellLogLinesOnFailure logs, if the test failed, the provider's log lines
// about a.
func tellLogLinesOnFailure(t testing.TB, a managedObject) {
	if t.Failed() {
		t.Logf("the provider's log lines about %s/%s:\n%s", a.GetNamespace(), a.GetName(), logLinesAbout(a))
		all := strings.Split(logs.String(), "\n")
		t.Logf("the provider's last log lines:\n%s", strings.Join(all[max(0, len(all)-60):], "\n"))
	}
}

// logLinesAbout is the provider's log lines that name the object, the last 40.
func logLinesAbout(a managedObject) string {
	var about []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, a.GetName()) && strings.Contains(l, a.GetNamespace()) {
			about = append(about, l)
		}
	}
	return strings.Join(about[max(0, len(about)-40):], "\n")
}

// testThrottlingNeighbours: 20 namespaces whose IAS tenants answer every call
// with 429 and Retry-After of an hour, and 20 whose runtimes' API servers do
// the same, cost the platform nothing measurable: a new IASApplication and a
// new RuntimeSecret of another namespace become Ready within seconds, while
// each throttling resource says what its target did.
func testThrottlingNeighbours(t *testing.T) {
	g := NewWithT(t)
	const neighbours = 20
	var throttled []managedObject
	for i := range neighbours {
		tn := newTenant(t, newNamespace(t), iassim.Options{})
		tn.sim.InjectFault(iassim.Fault{Kind: iassim.Fault429, Rate: 1, RetryAfter: time.Hour})
		a := tn.app(fmt.Sprintf("runtime-throttled-%d", i))
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
		throttled = append(throttled, a)
	}
	runtime := testnet.Throttling(t)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: runtime.Certificate().Raw})
	for i := range neighbours {
		ns, id := newNamespace(t), fmt.Sprintf("rt-throttled-%d", i)
		putCredentials(t, ns, "creds", id+"-client-secret-value")
		putKubeconfig(t, ns, id, newKubeconfig(t, rtEnv, id))
		pointAtWithCA(t, ns, id, runtime.URL, ca)
		rs := runtimeSecret(ns, id, id, "creds")
		g.Expect(k8s.Create(ctx, rs)).To(Succeed())
		throttled = append(throttled, rs)
	}
	for _, o := range throttled {
		expectSyncedFalse(t, o, "HTTP 429 Too Many Requests")
	}

	platform := newTenant(t, newNamespace(t), iassim.Options{})
	start := time.Now()
	app := platform.app("runtime-beside-throttling")
	g.Expect(k8s.Create(ctx, app)).To(Succeed())
	waitReadyWithin(t, app, 10*time.Second)
	t.Logf("a new IASApplication Ready %v after its creation, beside %d throttling tenants", time.Since(start), neighbours)

	ns, id := newNamespace(t), "rt-beside-throttling"
	newRuntimeNamespace(t, rt, ns)
	putCredentials(t, ns, "creds", id+"-client-secret-value")
	putKubeconfig(t, ns, id, newKubeconfig(t, rtEnv, id))
	start = time.Now()
	rs := runtimeSecret(ns, id, id, "creds")
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	waitReadyWithin(t, rs, 10*time.Second)
	t.Logf("a new RuntimeSecret Ready %v after its creation, beside %d throttling runtimes", time.Since(start), neighbours)
}
