package integration

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// testAdmissionRefusesBadValues: every typed value the provider decodes is
// checked by the API server, so no object can exist that the provider's cache
// cannot read (one such object would stall every resource of its kind).
func testAdmissionRefusesBadValues(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	apps := map[string]map[string]any{
		"validFor":     {"validFor": "banana"},
		"rotateBefore": {"validFor": "2h", "rotateBefore": "1 hour"},
		"retireAfter":  {"retireAfter": "-15m"},
		"no unit":      {"validFor": "3600"},
	}
	// A name that would change IAS's filter never reaches the provider.
	for _, name := range []string{"a or name eq b", "x\"y", "-leading-dash"} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": iasv1alpha1.SchemeGroupVersion.String(), "kind": iasv1alpha1.IASApplicationKind,
			"metadata": map[string]any{"name": "bad-name", "namespace": tn.ns},
			"spec":     map[string]any{"forProvider": map[string]any{"name": name}},
		}}
		err := k8s.Create(ctx, u)
		g.Expect(err).To(HaveOccurred(), "IASApplication named %q was accepted", name)
		g.Expect(err.Error()).To(ContainSubstring("should match"), name)
	}
	for what, secret := range apps {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": iasv1alpha1.SchemeGroupVersion.String(), "kind": iasv1alpha1.IASApplicationKind,
			"metadata": map[string]any{"name": "bad-duration", "namespace": tn.ns},
			"spec":     map[string]any{"forProvider": map[string]any{"secret": secret}},
		}}
		err := k8s.Create(ctx, u)
		g.Expect(err).To(HaveOccurred(), "IASApplication with a bad %s was accepted", what)
		g.Expect(err.Error()).To(ContainSubstring("should match"), what)
	}
	for what, limit := range map[string]map[string]any{
		"qps beyond int32": {"qps": int64(1) << 40, "burst": 10},
		"qps zero":         {"qps": 0, "burst": 10},
		"burst too large":  {"qps": 10, "burst": 5000},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "eventingauth.kyma-project.io/v1alpha1", "kind": "ProviderConfig",
			"metadata": map[string]any{"name": "bad-rate", "namespace": tn.ns},
			"spec": map[string]any{"credentials": map[string]any{"source": "Secret", "secretRef": map[string]any{"name": "x"}},
				"rateLimit": limit},
		}}
		g.Expect(k8s.Create(ctx, u)).NotTo(Succeed(), "ProviderConfig with %s was accepted", what)
	}
	// The kind is not stalled: a good resource beside the refused ones works.
	a := tn.app("runtime-beside-bad-values")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
}

// testLostCreateAnswerWithListLag: IAS stores the app but answers 500, and its
// lists show the app only seconds later. The provider must not make a second.
func testLostCreateAnswerWithListLag(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{ListLag: 3 * time.Second})
	tn.sim.FailAfterCreate(1)
	a := tn.app("runtime-lost-answer")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	// Whether a reconcile falls within the lag, and says that IAS does not
	// list the app yet (TestUnansweredCreateComesBackWhenListsSettle), depends
	// on the suite's load; what must hold is one app, made once.
	waitReady(t, a)
	expectPublished(g, tn, a)
	g.Consistently(func() []iassim.App { return tn.sim.AppsNamed(a.Name) }, 2*poll, 250*time.Millisecond).Should(HaveLen(1))
	g.Expect(tn.sim.Stats().Count(operation.CreateApplication, 0)).To(Equal(1), "the create was not repeated")
}

// testCrashAfterAppStored: the provider was killed after IAS stored the app
// and before the answer was recorded (the create-pending annotation is all that
// is left); IAS's list lags. The app is adopted, not made again.
func testCrashAfterAppStored(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{ListLag: 3 * time.Second})
	a := tn.app("runtime-crashed-create")
	meta.SetExternalCreatePending(a, time.Now())
	id := tn.sim.AddApp(iassim.App{Name: a.Name, Description: ias.AppMarker, SSOType: "openIdConnect"})
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	g.Expect(meta.GetExternalName(get(g, a))).To(Equal(id))
	g.Expect(tn.sim.AppsNamed(a.Name)).To(HaveLen(1))
	g.Expect(tn.sim.Stats().Count(operation.CreateApplication, 0)).To(Equal(0))
}

// testLateListedDuplicate: IAS lists the app of a lost create only after the
// provider stopped waiting and made another. The extra one, which carries the
// provider's marker, is deleted with an event.
func testLateListedDuplicate(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{ListLag: listSettle + 4*time.Second})
	tn.sim.FailAfterCreate(1)
	a := tn.app("runtime-late-listed")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	g.Expect(tn.sim.Stats().Count(operation.CreateApplication, 0)).To(Equal(2))
	expectEvent(t, a, "DeletedDuplicateApplication")
	g.Eventually(func() []iassim.App { return tn.sim.AppsNamed(a.Name) }, timeout, 200*time.Millisecond).Should(HaveLen(1))
	g.Expect(tn.sim.AppsNamed(a.Name)[0].ID).To(Equal(meta.GetExternalName(get(g, a))), "the app in use is kept")
	expectPublished(g, tn, a)
}

// testTwoOwnApps: two apps of this provider carry the name (an earlier crash):
// one is kept, the other deleted with an event; namesakes without the marker
// are never deleted (testTwoApps).
func testTwoOwnApps(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	first := tn.sim.AddApp(iassim.App{Name: "runtime-own-twice", Description: ias.AppMarker, Created: time.Now().Add(-time.Minute)})
	tn.sim.AddApp(iassim.App{Name: "runtime-own-twice", Description: ias.AppMarker})
	a := tn.app("runtime-own-twice")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	expectEvent(t, a, "DeletedDuplicateApplication")
	g.Expect(meta.GetExternalName(get(g, a))).To(Equal(first), "the older app is kept")
	g.Expect(tn.sim.AppsNamed(a.Name)).To(HaveLen(1))
}

// testRotationWaitsForRuntimes: after a rotation the older secret stays in IAS
// until every RuntimeSecret using the application carries the new one and the
// grace period has passed. A runtime that cannot be reached keeps it alive; the
// application never holds more than two secrets of this provider.
func testRotationWaitsForRuntimes(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	a := tn.app("runtime-rotation-lockout")
	a.Spec.ForProvider.Secret.ValidFor = &metav1.Duration{Duration: time.Hour}
	a.Spec.ForProvider.Secret.RotateBefore = &metav1.Duration{Duration: time.Hour - 12*time.Second}
	a.Spec.ForProvider.Secret.RetireAfter = &metav1.Duration{Duration: 2 * time.Second}
	g.Expect(k8s.Create(ctx, a)).To(Succeed())

	// Two runtimes (two target namespaces on the shared runtime) use the app.
	users := map[string]*runtimev1alpha1.RuntimeSecret{}
	for _, id := range []string{"lockout-a", "lockout-b"} {
		newRuntimeNamespace(t, rt, tn.ns+"-"+id)
		putKubeconfig(t, tn.ns, id, newKubeconfig(t, rtEnv, id))
		rs := runtimeSecretOfApp(tn.ns, id, id, a.Name)
		rs.Spec.ForProvider.Target.Namespace = tn.ns + "-" + id
		g.Expect(k8s.Create(ctx, rs)).To(Succeed())
		users[id] = rs
	}
	waitReady(t, a)
	first := expectPublished(g, tn, a).Secrets[0]
	for id, rs := range users {
		waitReady(t, rs)
		expectOnRuntime(t, rt, tn.ns+"-"+id, "eventing-webhook-auth", connection(g, a))
	}

	// Never more than two secrets of this provider, sampled throughout.
	var most atomic.Int32
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for _, app := range tn.sim.AppsNamed(a.Name) {
				n := int32(0)
				for _, s := range app.Secrets {
					if s.Description == iasv1alpha1.DefaultSecretDescription {
						n++
					}
				}
				if n > most.Load() {
					most.Store(n)
				}
			}
		}
	}()

	// Runtime b becomes unreachable before the rotation is due.
	unreachable(t, tn.ns, "lockout-b")
	expectSyncedFalse(t, users["lockout-b"], "cannot read Secret")

	// The rotation publishes a new secret; the app stays Ready; runtime a takes it up.
	g.Eventually(func(g Gomega) {
		g.Expect(string(connection(g, a)["client_secret"])).NotTo(Equal(first.Value))
	}, timeout, 200*time.Millisecond).Should(Succeed())
	status, _ := condition(g, a, xpv2.TypeReady)
	g.Expect(status).To(Equal(corev1.ConditionTrue), "Ready as soon as the new secret is published")
	expectOnRuntime(t, rt, tn.ns+"-lockout-a", "eventing-webhook-auth", connection(g, a))
	expectEvent(t, a, "RetiringClientSecret")

	// Runtime b still holds the first secret: it stays in IAS, and the status says why.
	g.Eventually(func(g Gomega) {
		get(g, a)
		g.Expect(a.Status.AtProvider.Retiring).To(ContainElement(And(
			HaveField("ID", first.ID), HaveField("WaitingFor", ContainSubstring("lockout-b")))))
	}, timeout, 200*time.Millisecond).Should(Succeed())
	g.Consistently(func() bool { return hasSecret(tn, a.Name, first.ID) }, 3*poll, 200*time.Millisecond).Should(BeTrue(),
		"the secret runtime b holds was deleted in IAS")

	// Runtime b comes back, takes up the current secret, and only then the first one goes.
	g.Expect(k8s.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tn.ns, Name: "kubeconfig-lockout-b"}})).To(Succeed())
	putKubeconfig(t, tn.ns, "lockout-b", newKubeconfig(t, rtEnv, "lockout-b-again"))
	g.Eventually(func() bool { return hasSecret(tn, a.Name, first.ID) }, timeout, 200*time.Millisecond).Should(BeFalse())
	g.Expect(string(onRuntime(g, rt, tn.ns+"-lockout-b", "eventing-webhook-auth").Data["client_secret"])).NotTo(Equal(first.Value),
		"the first secret was deleted while runtime b still held it")
	expectEvent(t, a, "DeletedStaleClientSecret")
	g.Expect(most.Load()).To(BeNumerically("<=", 2), "the application held more than two secrets of this provider")
}

// unreachable points a runtime's kubeconfig at an address where nothing listens.
func unreachable(t *testing.T, ns, runtimeID string) {
	t.Helper()
	g := NewWithT(t)
	s := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, clientKey(ns, "kubeconfig-"+runtimeID), s)).To(Succeed())
	cfg, err := clientcmd.Load(s.Data["config"])
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range cfg.Clusters {
		c.Server = "https://127.0.0.1:1"
	}
	s.Data["config"], err = clientcmd.Write(*cfg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8s.Update(ctx, s)).To(Succeed())
}

func hasSecret(tn *tenant, appName, id string) bool {
	for _, app := range tn.sim.AppsNamed(appName) {
		for _, s := range app.Secrets {
			if s.ID == id {
				return true
			}
		}
	}
	return false
}

func clientKey(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// testSecretDeletedInIAS: the published secret deleted in IAS behind the
// provider's back is replaced within the secret check, though polls between
// checks do not list secrets.
func testSecretDeletedInIAS(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	a := tn.app("runtime-secret-deleted-in-ias")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	id := meta.GetExternalName(a)
	first := expectPublished(g, tn, a).Secrets[0]

	// Between checks a poll reads no secrets: over three polls, at most two lists.
	lists := tn.sim.Stats().Count(operation.ListAPISecrets, 0)
	time.Sleep(3 * poll) //nolint:forbidigo // Counting what polls do over a span of time.
	g.Expect(tn.sim.Stats().Count(operation.ListAPISecrets, 0) - lists).To(BeNumerically("<=", 2))

	tn.sim.MutateApp(id, func(app *iassim.App) { app.Secrets = nil })
	g.Eventually(func(g Gomega) {
		app := expectPublished(g, tn, a)
		g.Expect(app.Secrets).To(HaveLen(1))
		g.Expect(app.Secrets[0].ID).NotTo(Equal(first.ID))
	}, secretCheck+2*poll+10*time.Second, 200*time.Millisecond).Should(Succeed())
	waitReady(t, a)
}

// testTwoResourcesOneNameWhileListsLag: two resources of one namespace name
// one app while IAS lists new apps 10 s late. The first to claim the name
// makes the app; the other makes none and says who claims the name, also
// once IAS lists the app (then naming its owner).
func testTwoResourcesOneNameWhileListsLag(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{ListLag: 10 * time.Second})
	a, b := tn.app("runtime-one-name-a"), tn.app("runtime-one-name-b")
	a.Spec.ForProvider.Name, b.Spec.ForProvider.Name = "runtime-one-name", "runtime-one-name"
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := 0
		for _, o := range []*iasv1alpha1.IASApplication{a, b} {
			if st, _ := condition(g, o, xpv2.TypeReady); st == corev1.ConditionTrue {
				ready++
			}
		}
		g.Expect(ready).To(Equal(1))
	}, timeout, 200*time.Millisecond).Should(Succeed())
	winner, loser := a, b
	if st, _ := condition(g, b, xpv2.TypeReady); st == corev1.ConditionTrue {
		winner, loser = b, a
	}
	// Its reconciles say who claims the name, until IAS lists the app; then
	// they name its owner.
	g.Eventually(func(g Gomega) {
		st, msg := condition(g, loser, xpv2.TypeSynced)
		g.Expect(st).To(Equal(corev1.ConditionFalse))
		g.Expect(msg).To(Or(ContainSubstring("is claimed by IASApplication "+winner.Namespace+"/"+winner.Name),
			ContainSubstring("belongs to IASApplication "+winner.Namespace+"/"+winner.Name)))
	}, timeout, 200*time.Millisecond).Should(Succeed())
	g.Consistently(func() []iassim.App { return tn.sim.AppsNamed("runtime-one-name") }, 15*time.Second, 500*time.Millisecond).Should(HaveLen(1))
	g.Expect(tn.sim.Stats().Count(operation.CreateApplication, 0)).To(Equal(1), "creates of the one name")
	expectSyncedFalse(t, loser, "belongs to IASApplication "+winner.Namespace+"/"+winner.Name)
}
