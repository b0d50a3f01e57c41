package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// sameTenant is a ProviderConfig "ias" in namespace ns for tn's simulated
// tenant, logging on with password and calling at rate (nil: the default).
func sameTenant(t *testing.T, tn *tenant, ns, password string, rate *v1alpha1.RateLimit) *tenant {
	t.Helper()
	other := &tenant{sim: tn.sim, ns: ns, pcName: "ias", secret: "ias-creds", username: tn.username, password: password, tokenURL: tn.tokenURL}
	secrets.add(nil, password)
	other.writeCreds(t, map[string]string{"username": tn.username, "password": password, "url": tn.sim.URL})
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: other.pcName, Namespace: ns},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.LocalCredentials{
			Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.LocalSecretReference{Name: other.secret}},
			TenantSettings: v1alpha1.TenantSettings{RateLimit: rate}},
	}
	NewWithT(t).Expect(k8s.Create(ctx, pc)).To(Succeed())
	return other
}

// changes counts the requests that change the tenant: app and api secret
// creates, patches and deletes.
func changes(sim *iassim.Running) int {
	st := sim.Stats()
	n := 0
	for _, op := range []string{operation.CreateApplication, operation.PatchApplication, operation.UpdateApplication, operation.DeleteApplication,
		operation.CreateAPISecret, operation.DeleteAPISecret} {
		n += st.Count(op, 0)
	}
	return n
}

func waitGone(t *testing.T, o client.Object) {
	t.Helper()
	NewWithT(t).Eventually(func() bool {
		return kerrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(o), o))
	}, timeout, 200*time.Millisecond).Should(BeTrue(), "%s still there", o.GetName())
}

// testOneOwner: an IAS app has one owner. Resources in another namespace that
// name it, by name or by UUID, get an error naming the owner and a Warning
// event, send IAS nothing but reads, and their deletion leaves the app; the
// owner made again under its namespace and name keeps the app; the owner hands
// it over with one annotation.
func testOneOwner(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	owner := newTenant(t, newNamespace(t), iassim.Options{})
	a := owner.app("runtime-owned")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	appID := meta.GetExternalName(get(g, a))
	stored, _ := owner.sim.App(appID)
	g.Expect(stored.Description).To(HaveSuffix(" " + owner.ns + "/runtime-owned"))
	ownerConn := connection(g, a)

	other := sameTenant(t, owner, newNamespace(t), owner.password, nil)
	byName := other.app("intruder-by-name")
	byName.Spec.ForProvider.Name = "runtime-owned"
	byID := other.app("intruder-by-id")
	meta.SetExternalName(byID, appID)
	before := changes(owner.sim)
	for _, intruder := range []*iasv1alpha1.IASApplication{byName, byID} {
		g.Expect(k8s.Create(ctx, intruder)).To(Succeed())
	}
	for _, intruder := range []*iasv1alpha1.IASApplication{byName, byID} {
		expectSyncedFalse(t, intruder, "belongs to IASApplication "+owner.ns+"/runtime-owned")
		expectEvent(t, intruder, "CannotObserveExternalResource")
	}
	g.Consistently(func(g Gomega) {
		g.Expect(changes(owner.sim)).To(Equal(before), "the intruders changed the tenant")
		for _, intruder := range []*iasv1alpha1.IASApplication{byName, byID} {
			s := &corev1.Secret{}
			g.Expect(kerrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: other.ns, Name: intruder.Name + "-creds"}, s))).To(BeTrue(), "a connection Secret was published for %s", intruder.Name)
		}
	}, 2*poll, 200*time.Millisecond).Should(Succeed())
	// The intruder's status forged to name the app, as anyone who may edit
	// IASApplications/status there can: its deletion asks IAS all the same.
	g.Eventually(func(g Gomega) {
		get(g, byID)
		byID.Status.AtProvider.ID = appID
		g.Expect(k8s.Status().Update(ctx, byID)).To(Succeed())
	}, timeout, 200*time.Millisecond).Should(Succeed())
	for _, intruder := range []*iasv1alpha1.IASApplication{byName, byID} {
		g.Expect(k8s.Delete(ctx, intruder)).To(Succeed())
		waitGone(t, intruder)
	}
	_, exists := owner.sim.App(appID)
	g.Expect(exists).To(BeTrue(), "deleting an intruder deleted the owner's app")
	g.Expect(changes(owner.sim)).To(Equal(before))
	waitReady(t, a)
	g.Expect(connection(g, a)).To(Equal(ownerConn), "the owner's credentials changed")

	// The owner deleted with the app orphaned (management policies without
	// Delete) and made again (a restore, a new UID) keeps its app.
	get(g, a)
	a.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate,
		xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}
	g.Expect(k8s.Update(ctx, a)).To(Succeed())
	g.Expect(k8s.Delete(ctx, a)).To(Succeed())
	waitGone(t, a)
	// What the garbage collector, which envtest lacks, does with the
	// connection Secret the deleted resource controlled.
	g.Expect(k8s.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: owner.ns, Name: "runtime-owned-creds"}})).To(Succeed())
	a = owner.app("runtime-owned")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	g.Expect(meta.GetExternalName(get(g, a))).To(Equal(appID), "the owner made again took another app")
	g.Expect(owner.sim.AppsNamed("runtime-owned")).To(HaveLen(1))

	// Handed over by annotating the owner: the target takes the app, the old
	// owner only reads it and its deletion leaves it.
	// A hand-over to a resource that does not ask for the app waits.
	// Read again on a conflict: the provider may write the resource after
	// its Ready.
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		get(g, a)
		meta.AddAnnotations(a, map[string]string{apis.AnnotationHandOverTo: other.ns + "/runtime-owned"})
		return k8s.Update(ctx, a)
	})).To(Succeed())
	before = changes(owner.sim)
	expectSyncedFalse(t, a, "waits for IASApplication "+other.ns+"/runtime-owned to name it: it does not exist")
	g.Expect(changes(owner.sim)).To(Equal(before), "the app was pushed to a resource that did not ask for it")
	target := other.app("runtime-owned")
	g.Expect(k8s.Create(ctx, target)).To(Succeed())
	waitReady(t, target)
	g.Expect(meta.GetExternalName(get(g, target))).To(Equal(appID))
	expectPublished(g, other, target)
	expectSyncedFalse(t, a, "belongs to IASApplication "+other.ns+"/runtime-owned")
	expectEvent(t, a, "HandedOverApplication")
	g.Expect(k8s.Delete(ctx, a)).To(Succeed())
	waitGone(t, a)
	_, exists = owner.sim.App(appID)
	g.Expect(exists).To(BeTrue(), "the old owner's deletion deleted the handed-over app")
	waitReady(t, target)
}

// testTenantSharedApart: a namespaced ProviderConfig naming the same tenant
// URL with a wrong password and a rate limit of 1 a second neither slows the
// platform's ProviderConfig nor drops what it learnt, and adds no listing.
func testTenantSharedApart(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	platform := newTenant(t, newNamespace(t), iassim.Options{})
	first := platform.app("runtime-shared-0")
	g.Expect(k8s.Create(ctx, first)).To(Succeed())
	waitReady(t, first)

	// Full listings in a window of the same length and the same work (five
	// new runtimes, whose first reconciles wait for a listing) without the
	// other ProviderConfigs, then beside them: a listing of their own would
	// add one every listing period.
	window := 6 * poll
	fullListings := func(since time.Time) int {
		n := 0
		for _, r := range platform.sim.Requests() {
			if r.Time.After(since) && r.Time.Before(since.Add(window)) && r.Operation == operation.ListApplications && r.Filter == "" {
				n++
			}
		}
		return n
	}
	fiveNew := func(prefix string) {
		t.Helper()
		start := time.Now()
		apps := make([]*iasv1alpha1.IASApplication, 5)
		for i := range apps {
			apps[i] = platform.app(prefix + string(rune('1'+i)))
			g.Expect(k8s.Create(ctx, apps[i])).To(Succeed())
		}
		for _, a := range apps {
			g.Eventually(func(g Gomega) {
				st, msg := condition(g, a, xpv2.TypeReady)
				g.Expect(st).To(Equal(corev1.ConditionTrue), msg)
			}, 15*time.Second, 100*time.Millisecond).Should(Succeed(), "%s not Ready within 15 s of its creation", a.Name)
		}
		t.Logf("5 runtimes %s* Ready in %v", prefix, time.Since(start))
		if d := time.Since(start); d < window {
			time.Sleep(window - d)
		}
	}
	start := time.Now()
	fiveNew("runtime-alone-")
	alone := fullListings(start)

	slow := &v1alpha1.RateLimit{QPS: 1, Burst: 1}
	hostile := sameTenant(t, platform, newNamespace(t), "wrong-"+platform.password, slow)
	h := hostile.app("runtime-hostile")
	g.Expect(k8s.Create(ctx, h)).To(Succeed())
	expectSyncedFalse(t, h, "rejected the credentials")
	// Four more wrong passwords for the platform's username in the same
	// namespace, the tenant URL written four other ways: held back, not sent.
	for i, url := range []string{strings.ToUpper(platform.sim.URL), platform.sim.URL + "/", strings.Replace(platform.sim.URL, "http://", "HTTP://", 1) + "/", platform.sim.URL} {
		name := fmt.Sprintf("ias-wrong-%d", i)
		password := fmt.Sprintf("wrong-%d-%s", i, platform.password)
		secrets.add(nil, password)
		g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: hostile.ns},
			StringData: map[string]string{"username": platform.username, "password": password, "url": url}})).To(Succeed())
		g.Expect(k8s.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: hostile.ns},
			Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.LocalSecretReference{Name: name}}}})).To(Succeed())
		a := hostile.app("runtime-hostile-" + name)
		a.Spec.ProviderConfigReference.Name = name
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
		expectSyncedFalse(t, a, `no other password of the user that IAS has not accepted yet is tried from this namespace before`)
	}
	// Right credentials, its own slow rate: its resources share what the
	// platform's learnt, and wait in their own bucket.
	sameCreds := sameTenant(t, platform, newNamespace(t), platform.password, slow)
	s := sameCreds.app("runtime-slow")
	g.Expect(k8s.Create(ctx, s)).To(Succeed())

	// Beside a wrong password and a rate limit of 1/s.
	start = time.Now()
	fiveNew("runtime-shared-")
	beside := fullListings(start)
	t.Logf("full listings in %v: %d alone, %d beside the other ProviderConfigs", window, alone, beside)
	g.Expect(beside).To(BeNumerically("<=", alone+1), "full listings: %d beside the other ProviderConfigs, %d without", beside, alone)
	rejected := 0
	for _, r := range platform.sim.Requests() {
		if r.Status == 401 {
			rejected++
		}
	}
	g.Expect(rejected).To(Equal(1), "failed logons with five wrong passwords of the platform's user")
	g.Expect(platform.sim.Stats().Count(operation.WellKnown, 0)).To(Equal(1), "the well-known document was read again")
	waitReady(t, s)
	waitReady(t, first)
}

// testHostileAnswers: a tenant that answers one app's lookup with pages that
// never end, and another app's GET with 512 MiB, leaves the provider serving
// the others; each of the two gets a condition naming what IAS did.
func testHostileAnswers(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	warm := tn.app("runtime-hostile-warm")
	g.Expect(k8s.Create(ctx, warm)).To(Succeed())
	waitReady(t, warm)

	endless := tn.app("runtime-endless")
	tn.sim.SetEndlessPages("name eq runtime-endless", iassim.EndlessFresh)
	g.Expect(k8s.Create(ctx, endless)).To(Succeed())
	// An app made after the tenant was listed, so that its lookup is a GET.
	bigID := tn.sim.AddApp(iassim.App{Name: "runtime-oversized"})
	tn.sim.SetOversized(bigID, 512<<20)
	big := tn.app("runtime-oversized")
	meta.SetExternalName(big, bigID)
	g.Expect(k8s.Create(ctx, big)).To(Succeed())

	tn.sim.SetEndlessPages("name eq runtime-huge-cursor", iassim.EndlessHugeCursor)
	hugeCursor := tn.app("runtime-huge-cursor")
	g.Expect(k8s.Create(ctx, hugeCursor)).To(Succeed())
	tn.sim.SetEndlessPages("name eq runtime-padded", iassim.EndlessSameApps)
	padded := tn.app("runtime-padded")
	g.Expect(k8s.Create(ctx, padded)).To(Succeed())
	expectSyncedFalse(t, endless, tn.sim.URL)
	expectSyncedFalse(t, endless, `the listing "name eq runtime-endless" did not end`)
	expectSyncedFalse(t, hugeCursor, "larger than 1 MiB")
	expectSyncedFalse(t, padded, `the listing "name eq runtime-padded" did not end`)
	expectSyncedFalse(t, big, "larger than 4 MiB")
	for i := range 3 {
		a := tn.app("runtime-beside-hostile-" + string(rune('a'+i)))
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
		waitReady(t, a)
	}
	// Tried again with growing delays, not in a loop.
	count := func() int {
		n := 0
		for _, r := range tn.sim.Requests() {
			if r.Filter == "name eq runtime-endless" {
				n++
			}
		}
		return n
	}
	before := count()
	time.Sleep(10 * time.Second)
	g.Expect(count()-before).To(BeNumerically("<", 100), "endless pages read in 10 s")
	g.Expect(strings.Contains(get(g, endless).(*iasv1alpha1.IASApplication).GetCondition(xpv2.TypeSynced).Message, "tried again later")).To(BeTrue())
}

// testAdoptByExternalName: an app of eventing-auth-manager taken by its UUID
// (crossplane.io/external-name), not by name, records the secret it held as
// inherited, as an adoption by name does: with no grace period and no
// RuntimeSecret carrying the resource's own secret, the operator's secret,
// which a runtime may hold, stays in IAS.
func testAdoptByExternalName(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	id := tn.sim.AddApp(iassim.App{Name: "runtime-by-uuid", DisplayName: "runtime-by-uuid",
		Secrets: []iassim.Secret{{Description: "eventing-auth-manager", AuthorizationScopes: []string{"oAuth"}}}})
	stored, _ := tn.sim.App(id)
	operators := stored.Secrets[0]
	a := tn.app("runtime-by-uuid")
	meta.SetExternalName(a, id)
	a.Spec.ForProvider.Secret.Description = "eventing-auth-manager"
	a.Spec.ForProvider.Secret.RetireAfter = &metav1.Duration{}
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	g.Expect(get(g, a).GetAnnotations()).To(HaveKeyWithValue(apis.AnnotationInheritedSecrets, operators.ID))
	g.Consistently(func(g Gomega) {
		app, _ := tn.sim.App(id)
		g.Expect(app.Secrets).To(ContainElement(operators), "the operator's secret was retired")
	}, 2*poll, 200*time.Millisecond).Should(Succeed())
}
