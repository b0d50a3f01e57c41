package integration

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kyma-project/provider-eventing-auth/apis"
	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

func testCreate(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})

	a := tn.app("runtime-create-1")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)

	apps := tn.sim.AppsNamed("runtime-create-1")
	g.Expect(apps).To(HaveLen(1))
	g.Expect(meta.GetExternalName(a)).To(Equal(apps[0].ID))
	app := expectPublished(g, tn, a)
	g.Expect(app.Secrets).To(HaveLen(1))
	g.Expect(app.SSOType).To(Equal("openIdConnect"))
	g.Expect(app.DisplayName).To(Equal("runtime-create-1"))
	g.Expect(a.Status.AtProvider.ClientID).To(Equal(app.ClientID))
	g.Expect(a.Status.AtProvider.SecretID).To(Equal(app.Secrets[0].ID))

	st := tn.sim.Stats()
	// One list by name before the create; a poll may have listed the tenant's
	// inventory since.
	g.Expect(st.Count(operation.ListApplications, 0)).To(BeNumerically("<=", 2))
	g.Expect(st.Count(operation.CreateApplication, 0)).To(Equal(1))
	g.Expect(st.Count(operation.CreateAPISecret, 0)).To(Equal(1))
	g.Expect(st.Count(operation.WellKnown, 0)).To(Equal(1))

	b := tn.app("runtime-create-2")
	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	waitReady(t, b)
	expectPublished(g, tn, b)
	g.Expect(tn.sim.Stats().Count(operation.WellKnown, 0)).To(Equal(1), "a second app on the same tenant reads no well-known document")

	// Steady state: polls neither create nor publish anything new, nor look
	// for the apps by name again (their lists are the tenant's inventory).
	id := meta.GetExternalName(a)
	g.Consistently(func(g Gomega) {
		st := tn.sim.Stats()
		g.Expect(st.Count(operation.CreateApplication, 0)).To(Equal(2))
		g.Expect(st.Count(operation.CreateAPISecret, 0)).To(Equal(2))
		g.Expect(meta.GetExternalName(get(g, a))).To(Equal(id))
		g.Expect(get(g, a).GetAnnotations()).NotTo(HaveKey(apis.AnnotationUnconfirmedCreate))
	}, 2*poll, 200*time.Millisecond).Should(Succeed())
}

func testAdopt(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	id := tn.sim.AddApp(iassim.App{Name: "runtime-adopt", DisplayName: "runtime-adopt", Secrets: []iassim.Secret{
		{Description: iasv1alpha1.DefaultSecretDescription},
		{Description: iasv1alpha1.DefaultSecretDescription},
		{Description: "someone else's"},
	}})
	before, _ := tn.sim.App(id)

	a := tn.app("runtime-adopt")
	a.Spec.ForProvider.Secret.RetireAfter = &metav1.Duration{Duration: time.Second}
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	g.Expect(meta.GetExternalName(a)).To(Equal(id))
	g.Expect(tn.sim.AppsNamed("runtime-adopt")).To(HaveLen(1))
	g.Expect(tn.sim.Stats().Count(operation.CreateApplication, 0)).To(Equal(0))

	// The secrets the app came with stay while no RuntimeSecret carries the
	// new one: a runtime may hold one of them through a Secret the provider
	// does not know of.
	g.Eventually(func(g Gomega) {
		expectPublished(g, tn, a)
		g.Expect(a.Status.AtProvider.Retiring).To(HaveLen(3))
		g.Expect(a.Status.AtProvider.Retiring).To(HaveEach(HaveField("WaitingFor", ContainSubstring("came with the application"))))
	}, timeout, 200*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		app, _ := tn.sim.App(id)
		g.Expect(app.Secrets).To(HaveLen(4))
		for _, s := range before.Secrets {
			g.Expect(app.Secrets).To(ContainElement(HaveField("ID", s.ID)), "a secret the app came with was retired")
		}
	}, 2*poll, 200*time.Millisecond).Should(Succeed())
	expectEvent(t, a, "AdoptedExternalResource")
}

func testTwoApps(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	tn.sim.AddApp(iassim.App{Name: "runtime-twice"})
	tn.sim.AddApp(iassim.App{Name: "runtime-twice"})

	a := tn.app("runtime-twice")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	expectSyncedFalse(t, a, `found 2 IAS applications named "runtime-twice"`)
	g.Consistently(func(g Gomega) {
		g.Expect(tn.sim.AppsNamed("runtime-twice")).To(HaveLen(2))
		st := tn.sim.Stats()
		g.Expect(st.Count(operation.CreateApplication, 0) + st.Count(operation.DeleteApplication, 0) + st.Count(operation.CreateAPISecret, 0)).To(Equal(0))
	}, poll, 200*time.Millisecond).Should(Succeed())
}

func testNonCharged(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	tn.sim.AddApp(iassim.App{Name: "runtime-bundled", Type: "bundled"})

	a := tn.app("runtime-bundled")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	expectSyncedFalse(t, a, `is of type "bundled", not a customer-created (charged) application`)
	g.Expect(meta.GetExternalName(a)).To(BeEmpty())

	// Deleting the resource leaves the app alone.
	g.Expect(k8s.Delete(ctx, a)).To(Succeed())
	g.Eventually(func() bool { return kerrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)) }, timeout).Should(BeTrue())
	g.Expect(tn.sim.AppsNamed("runtime-bundled")).To(HaveLen(1))
	st := tn.sim.Stats()
	g.Expect(st.Count(operation.CreateApplication, 0) + st.Count(operation.DeleteApplication, 0) + st.Count(operation.CreateAPISecret, 0)).To(Equal(0))
}

func testConnectionSecretDeleted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	a := tn.app("runtime-lost-secret")
	a.Spec.ForProvider.Secret.RetireAfter = &metav1.Duration{Duration: time.Second}
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	id := meta.GetExternalName(a)
	old := string(connection(g, a)["client_secret"])

	g.Expect(k8s.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: a.Name + "-creds"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		app := expectPublished(g, tn, a)
		g.Expect(string(connection(g, a)["client_secret"])).NotTo(Equal(old))
		g.Expect(app.Secrets).To(HaveLen(1), "the lost secret is deleted once its successor is out and the grace period passed")
	}, timeout, 200*time.Millisecond).Should(Succeed())
	g.Expect(meta.GetExternalName(get(g, a))).To(Equal(id))
	g.Expect(tn.sim.Apps()).To(HaveLen(1))
}

func testDrift(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	a := tn.app("runtime-drift")
	a.Spec.ForProvider.DisplayName = "Runtime Drift"
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	id := meta.GetExternalName(a)

	tn.sim.MutateApp(id, func(app *iassim.App) { app.DisplayName = "changed by hand"; app.SSOType = "saml2" })
	g.Eventually(func(g Gomega) {
		app, _ := tn.sim.App(id)
		g.Expect(app.DisplayName).To(Equal("Runtime Drift"))
		g.Expect(app.SSOType).To(Equal("openIdConnect"))
	}, timeout, 200*time.Millisecond).Should(Succeed())

	tn.sim.DeleteApp(id)
	g.Eventually(func(g Gomega) {
		get(g, a)
		g.Expect(meta.GetExternalName(a)).NotTo(Equal(id))
		expectPublished(g, tn, a)
	}, timeout, 200*time.Millisecond).Should(Succeed())
	g.Expect(tn.sim.AppsNamed("runtime-drift")).To(HaveLen(1))
}

func testDelete(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	a := tn.app("runtime-delete")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	g.Expect(k8s.Delete(ctx, a)).To(Succeed())
	g.Eventually(func() bool { return kerrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)) }, timeout).Should(BeTrue())
	g.Expect(tn.sim.Apps()).To(BeEmpty())

	// An app already gone from IAS still lets deletion complete.
	b := tn.app("runtime-delete-gone")
	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	waitReady(t, b)
	get(g, b)
	meta.AddAnnotations(b, map[string]string{meta.AnnotationKeyReconciliationPaused: "true"})
	g.Expect(k8s.Update(ctx, b)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, b).(*iasv1alpha1.IASApplication).GetCondition(xpv2.TypeSynced).Reason).To(Equal(xpv2.ReasonReconcilePaused))
	}, timeout).Should(Succeed())
	tn.sim.DeleteApp(meta.GetExternalName(b))
	g.Expect(k8s.Delete(ctx, b)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, b)
		meta.RemoveAnnotations(b, meta.AnnotationKeyReconciliationPaused)
		g.Expect(k8s.Update(ctx, b)).To(Succeed())
	}, timeout).Should(Succeed())
	g.Eventually(func() bool { return kerrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)) }, timeout).Should(BeTrue())
	g.Expect(tn.sim.Apps()).To(BeEmpty())
}

func testFaults(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	// The first call meets each kind once and succeeds on its fifth attempt; the
	// creations, which are not resent, each fail once and succeed on a later reconcile.
	tn.sim.InjectFault(iassim.Fault{Kind: iassim.Fault429, Count: 1, RetryAfter: 2 * time.Second})
	tn.sim.InjectFault(iassim.Fault{Kind: iassim.Fault500, Count: 1})
	tn.sim.InjectFault(iassim.Fault{Kind: iassim.FaultTimeout, Count: 1})
	tn.sim.InjectFault(iassim.Fault{Kind: iassim.FaultReset, Count: 1})
	tn.sim.InjectFault(iassim.Fault{Kind: iassim.Fault500, Operation: operation.CreateApplication, Count: 1})
	tn.sim.InjectFault(iassim.Fault{Kind: iassim.Fault500, Operation: operation.CreateAPISecret, Count: 1})

	a := tn.app("runtime-faults")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	expectPublished(g, tn, a)
	g.Expect(tn.sim.AppsNamed("runtime-faults")).To(HaveLen(1), "never a duplicate app")

	log := tn.sim.Requests()
	saw429 := false
	for i, r := range log {
		if r.Status != 429 {
			continue
		}
		saw429 = true
		g.Expect(i+1).To(BeNumerically("<", len(log)), "a request follows the 429")
		g.Expect(log[i+1].Time.Sub(r.Time)).To(BeNumerically(">=", 2*time.Second-50*time.Millisecond),
			"the next request waited for Retry-After")
	}
	g.Expect(saw429).To(BeTrue())
	st := tn.sim.Stats()
	for _, code := range []int{500, 504, 599} {
		n := 0
		for op := range st {
			n += st[op][code]
		}
		if code == 504 {
			// A held request ends when the client gives up (499) or the hold ends (504).
			n += st.Count(operation.ListApplications, 499)
		}
		g.Expect(n).To(BeNumerically(">=", 1), "fault %d was exercised", code)
	}
}

func testFailAfterCreate(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	tn.sim.FailAfterCreate(1)
	a := tn.app("runtime-half-created")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	expectPublished(g, tn, a)
	g.Expect(tn.sim.AppsNamed("runtime-half-created")).To(HaveLen(1), "the app IAS kept is adopted, not duplicated")
}

func testMany(t *testing.T) {
	f := manyApplications(t, 200)
	t.Logf("%d IAS requests for %d applications, all Ready in %s", f.requests, f.n, f.elapsed)
	NewWithT(t).Expect(f.throttled).To(Equal(0), "the tenant's rate limit was hit")
}

// loadFigures are what a load scenario measured.
type loadFigures struct {
	n                   int
	elapsed             time.Duration
	requests, throttled int
}

// manyApplications creates n IASApplications at once against a simulator that
// allows 50 requests per second, and waits until all are Ready.
func manyApplications(t testing.TB, n int) loadFigures {
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{RateLimit: 50})
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.Expect(k8s.Create(ctx, tn.app(fmt.Sprintf("runtime-many-%03d", i)))).To(Succeed())
		}()
	}
	wg.Wait()
	g.Eventually(func(g Gomega) {
		l := &iasv1alpha1.IASApplicationList{}
		g.Expect(k8s.List(ctx, l, client.InNamespace(tn.ns))).To(Succeed())
		ready := 0
		for _, a := range l.Items {
			if a.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
				ready++
			}
		}
		g.Expect(ready).To(Equal(n))
	}, 4*time.Minute, time.Second).Should(Succeed())
	f := loadFigures{n: n, elapsed: time.Since(start).Round(100 * time.Millisecond)}
	g.Expect(tn.sim.Apps()).To(HaveLen(n))
	for _, codes := range tn.sim.Stats() {
		for code, c := range codes {
			f.requests += c
			if code == 429 {
				f.throttled += c
			}
		}
	}
	return f
}

func testBadProviderConfig(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	tn := newTenant(t, ns, iassim.Options{})
	cases := map[string]struct {
		creds map[string]string // nil: no Secret at all
		want  string
	}{
		"secret-missing":    {nil, "credentials Secret " + ns + "/creds-secret-missing of ProviderConfig " + ns + "/pc-secret-missing does not exist"},
		"key-missing":       {map[string]string{"username": tn.username, "url": tn.sim.URL}, `has no key "password"`},
		"wrong-password":    {map[string]string{"username": tn.username, "password": "wrong-password-value", "url": tn.sim.URL}, "rejected the credentials (HTTP 401 Unauthorized)"},
		"http-not-loopback": {map[string]string{"username": tn.username, "password": tn.password, "url": "http://tenant.example.com"}, "http is allowed only to a loopback host"},
		"malformed-url":     {map[string]string{"username": tn.username, "password": tn.password, "url": "https//no-scheme"}, "not a valid URL"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			if tc.creds != nil {
				s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds-" + name, Namespace: ns}, StringData: tc.creds}
				g.Expect(k8s.Create(ctx, s)).To(Succeed())
			}
			pc := &v1alpha1.ProviderConfig{
				ObjectMeta: metav1.ObjectMeta{Name: "pc-" + name, Namespace: ns},
				Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.LocalCredentials{
					Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.LocalSecretReference{Name: "creds-" + name}}},
			}
			g.Expect(k8s.Create(ctx, pc)).To(Succeed())
			a := tn.app("runtime-" + name)
			a.Spec.ProviderConfigReference.Name = pc.Name
			g.Expect(k8s.Create(ctx, a)).To(Succeed())
			expectSyncedFalse(t, a, tc.want)
		})
	}
}

func testCredentialsChange(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	a := tn.app("runtime-rotate-creds")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)

	// The tenant's password changes: 401 until the Secret follows.
	newPassword := "rotated-" + tn.password
	secrets.add(nil, newPassword)
	tn.sim.SetCredentials(tn.username, newPassword)
	g.Eventually(func(g Gomega) {
		_, msg := condition(g, a, xpv2.TypeSynced)
		g.Expect(msg).To(ContainSubstring("401"))
	}, timeout, 200*time.Millisecond).Should(Succeed())
	tn.writeCreds(t, map[string]string{"username": tn.username, "password": newPassword, "url": tn.sim.URL})
	waitReady(t, a)

	// The Secret moves to another tenant: the app is made there, with that
	// tenant's endpoints.
	other, err := iassim.New(iassim.Options{Username: tn.username, Password: newPassword}).Serve("127.0.0.1:0", false)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = other.Close() })
	secrets.add(other)
	tn.writeCreds(t, map[string]string{"username": tn.username, "password": newPassword, "url": other.URL})
	g.Eventually(func(g Gomega) {
		g.Expect(other.AppsNamed("runtime-rotate-creds")).To(HaveLen(1))
		get(g, a)
		g.Expect(meta.GetExternalName(a)).To(Equal(other.AppsNamed("runtime-rotate-creds")[0].ID))
		d := connection(g, a)
		g.Expect(string(d["token_url"])).To(Equal(other.URL + "/oauth2/token"))
		g.Expect(string(d["client_id"])).To(Equal(other.AppsNamed("runtime-rotate-creds")[0].ClientID))
	}, timeout, 200*time.Millisecond).Should(Succeed())
	g.Expect(other.Stats().Count(operation.WellKnown, 0)).To(Equal(1))
}

func testClusterProviderConfig(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := newNamespace(t)
	tn := newTenant(t, ns, iassim.Options{})
	cpc := &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1alpha1.ClusterProviderConfigSpec{Credentials: v1alpha1.ClusterCredentials{
			Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.SecretReference{Name: tn.secret, Namespace: ns}},
			Namespaces: []string{ns}},
	}
	g.Expect(k8s.Create(ctx, cpc)).To(Succeed())
	a := &iasv1alpha1.IASApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "runtime-default-config", Namespace: ns},
		Spec: iasv1alpha1.IASApplicationSpec{ManagedResourceSpec: xpv2.ManagedResourceSpec{
			WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: "runtime-default-config-creds"}}},
	}
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	g.Expect(a.Spec.ProviderConfigReference).To(Equal(&xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"}))
	waitReady(t, a)
	expectPublished(g, tn, a)
	g.Eventually(func(g Gomega) {
		get(g, cpc)
		g.Expect(cpc.Status.Users).To(Equal(int64(1)))
	}, timeout).Should(Succeed())
}

func testManagementPolicies(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	id := tn.sim.AddApp(iassim.App{Name: "runtime-observed", DisplayName: "by hand"})

	a := tn.app("runtime-observed")
	a.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	g.Expect(meta.GetExternalName(a)).To(Equal(id))
	g.Expect(a.Status.AtProvider.ID).To(Equal(id))
	g.Consistently(func(g Gomega) {
		app, _ := tn.sim.App(id)
		g.Expect(app.DisplayName).To(Equal("by hand"), "observe-only changes nothing")
		st := tn.sim.Stats()
		g.Expect(st.Count(operation.CreateApplication, 0) + st.Count(operation.CreateAPISecret, 0) + st.Count(operation.PatchApplication, 0)).To(Equal(0))
	}, poll, 200*time.Millisecond).Should(Succeed())

	// Without Delete, the app outlives the resource.
	b := tn.app("runtime-kept")
	b.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}
	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	waitReady(t, b)
	g.Expect(k8s.Delete(ctx, b)).To(Succeed())
	g.Eventually(func() bool { return kerrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)) }, timeout).Should(BeTrue())
	g.Expect(tn.sim.AppsNamed("runtime-kept")).To(HaveLen(1))
}

// expectSyncedFalse waits until the resource is Synced=False with a message
// containing want.
func expectSyncedFalse(t *testing.T, a managedObject, want string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		s, msg := condition(g, a, xpv2.TypeSynced)
		g.Expect(s).To(Equal(corev1.ConditionFalse))
		g.Expect(msg).To(ContainSubstring(want))
	}, timeout, 200*time.Millisecond).Should(Succeed())
}

// expectEvent waits for an event of the given reason on the resource.
func expectEvent(t *testing.T, a managedObject, reason string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		var reasons []string
		for _, e := range eventsOf(g, a) {
			reasons = append(reasons, e.Reason)
		}
		g.Expect(reasons).To(ContainElement(reason))
	}, timeout).Should(Succeed())
}

// eventsOf lists the events of a resource.
func eventsOf(g Gomega, a managedObject) []corev1.Event {
	l := &corev1.EventList{}
	g.Expect(k8s.List(ctx, l, client.InNamespace(a.GetNamespace()))).To(Succeed())
	var out []corev1.Event
	for _, e := range l.Items {
		if e.InvolvedObject.Name == a.GetName() && e.InvolvedObject.Kind == kindOf(a) {
			out = append(out, e)
		}
	}
	return out
}

// kindOf returns the kind of a typed object.
func kindOf(o client.Object) string {
	gvk, err := apiutil.GVKForObject(o, k8s.Scheme())
	if err != nil {
		panic(err)
	}
	return gvk.Kind
}

func testNoLeaks(t *testing.T) {
	g := NewWithT(t)
	// Its own data first, so the search never depends on what ran before: an
	// app with a published secret, and a runtime reached with a kubeconfig.
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	a := tn.app("runtime-leak-check")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	own := string(connection(g, a)["client_secret"])
	readyRuntimeSecret(t, rtEnv, rt, "rt-leak-check")

	values := secrets.values()
	g.Expect(values).To(ContainElements(own, tn.password), "the ledger holds the secrets to search for")
	kc := kubeconfigs.values()
	g.Expect(kc).NotTo(BeEmpty(), "the ledger holds kubeconfig parts to search for")
	values = append(values, kc...)

	events := &corev1.EventList{}
	g.Expect(k8s.List(ctx, events)).To(Succeed())
	var eventText strings.Builder
	for _, e := range events.Items {
		eventText.WriteString(e.Reason + " " + e.Message + "\n")
	}
	apps := &iasv1alpha1.IASApplicationList{}
	g.Expect(k8s.List(ctx, apps)).To(Succeed())
	for _, a := range apps.Items {
		_, _ = fmt.Fprintf(statuses, "%v\n", a.Status)
	}
	rss := &runtimev1alpha1.RuntimeSecretList{}
	g.Expect(k8s.List(ctx, rss)).To(Succeed())
	for _, r := range rss.Items {
		_, _ = fmt.Fprintf(statuses, "%v\n", r.Status)
	}
	places := map[string]string{"logs": logs.String(), "events": eventText.String(), "status": statuses.String()}
	for where, text := range places {
		g.Expect(text).NotTo(BeEmpty(), "nothing captured from %s", where)
		for _, v := range values {
			if v != "" && strings.Contains(text, v) {
				t.Errorf("a secret value or kubeconfig part (starting %s…) appears in %s", v[:4], where)
			}
		}
	}
	// The Secrets do hold the values: the search looks at real data. Read
	// from the API server: the provider's cache holds the Kyma CRs'
	// namespace's Secrets only.
	found, foundKubeconfig := false, false
	l := &corev1.SecretList{}
	direct, err := client.New(mgmtConfig, client.Options{Scheme: k8s.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(direct.List(ctx, l)).To(Succeed())
	for _, s := range l.Items {
		for _, v := range values {
			if string(s.Data["client_secret"]) == v {
				found = true
			}
		}
		for _, v := range kc {
			if strings.Contains(string(s.Data["config"]), v) {
				foundKubeconfig = true
			}
		}
	}
	g.Expect(found).To(BeTrue())
	g.Expect(foundKubeconfig).To(BeTrue())
}

func testRotation(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})

	bad := tn.app("runtime-bad-rotation")
	bad.Spec.ForProvider.Secret.ValidFor = &metav1.Duration{Duration: time.Hour}
	bad.Spec.ForProvider.Secret.RotateBefore = &metav1.Duration{Duration: 2 * time.Hour}
	err := k8s.Create(ctx, bad)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("rotateBefore needs validFor and must be shorter than it"))

	// Due for rotation about ten seconds after each secret is made.
	a := tn.app("runtime-rotating")
	a.Spec.ForProvider.Secret.ValidFor = &metav1.Duration{Duration: time.Hour}
	a.Spec.ForProvider.Secret.RotateBefore = &metav1.Duration{Duration: time.Hour - 10*time.Second}
	a.Spec.ForProvider.Secret.RetireAfter = &metav1.Duration{Duration: time.Second}
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	first := expectPublished(g, tn, a).Secrets[0]
	g.Expect(first.ValidTo).NotTo(BeNil())
	g.Expect(a.Status.AtProvider.SecretValidTo).NotTo(BeNil())
	g.Eventually(func(g Gomega) {
		app := expectPublished(g, tn, a)
		g.Expect(app.Secrets).To(HaveLen(1))
		g.Expect(app.Secrets[0].ID).NotTo(Equal(first.ID), "the secret was rotated and the old one deleted")
	}, timeout, 200*time.Millisecond).Should(Succeed())

	// No expiry asked for any more (as before going back to
	// eventing-auth-manager): the expiring secret is replaced at once by one
	// that never expires, and no further rotation follows.
	g.Eventually(func() error {
		get(g, a)
		a.Spec.ForProvider.Secret.ValidFor, a.Spec.ForProvider.Secret.RotateBefore = nil, nil
		return k8s.Update(ctx, a)
	}, timeout, 200*time.Millisecond).Should(Succeed())
	var lasting iassim.Secret
	g.Eventually(func(g Gomega) {
		app := expectPublished(g, tn, a)
		g.Expect(app.Secrets).To(HaveLen(1))
		g.Expect(app.Secrets[0].ValidTo).To(BeNil(), "the published secret never expires")
		lasting = app.Secrets[0]
	}, timeout, 200*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		app := expectPublished(g, tn, a)
		g.Expect(app.Secrets).To(HaveLen(1))
		g.Expect(app.Secrets[0].ID).To(Equal(lasting.ID), "a secret without expiry is not rotated")
	}, 3*poll, 500*time.Millisecond).Should(Succeed())
}
