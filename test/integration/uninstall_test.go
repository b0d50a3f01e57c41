package integration

import (
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// testKeptWhileKymaLives: the managed resources of a runtime whose Kyma CR
// lives, deleted as removing the Configuration deletes them, leave the IAS app,
// its secrets, the connection Secret and the runtime's Secret as they are, and
// say so; made again, they take everything up without a write to IAS or the
// runtime. Once the Kyma CR is gone, their deletion deletes both; a hand-made
// resource deleted on purpose deletes its app beside a living Kyma CR.
func testKeptWhileKymaLives(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	const id = "rt-kept"
	newRuntimeNamespace(t, rt, tn.ns)
	putKubeconfig(t, tn.ns, id, newKubeconfig(t, rtEnv, id))
	kyma := newKyma(tn.ns, id, "ga-kept")
	g.Expect(k8s.Create(ctx, kyma)).To(Succeed())

	// As Crossplane core composes them for the EventingAuth of the same name.
	composed := func() (*iasv1alpha1.IASApplication, *runtimev1alpha1.RuntimeSecret) {
		a := tn.app(id)
		rs := runtimeSecretOfApp(tn.ns, id, id, id)
		for _, o := range []client.Object{a, rs} {
			o.SetLabels(map[string]string{xcrd.LabelKeyNamePrefixForComposed: id})
		}
		return a, rs
	}
	a, rs := composed()
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	waitReady(t, a)
	waitReady(t, rs)
	app := expectPublished(g, tn, a)
	creds := connection(g, a)
	expectOnRuntime(t, rt, tn.ns, "eventing-webhook-auth", creds)
	onRT := onRuntime(g, rt, tn.ns, "eventing-webhook-auth")
	before := tn.sim.Stats()
	writes := func() int {
		since := tn.sim.Stats().Since(before)
		n := 0
		for _, op := range []string{operation.CreateApplication, operation.PatchApplication, operation.UpdateApplication,
			operation.DeleteApplication, operation.CreateAPISecret, operation.DeleteAPISecret} {
			n += since.Count(op, 0)
		}
		return n
	}

	// Removing the Configuration: core deletes the EventingAuth, the garbage
	// collector its composed resources.
	g.Expect(k8s.Delete(ctx, rs)).To(Succeed())
	g.Expect(k8s.Delete(ctx, a)).To(Succeed())
	expectGone(t, k8s, rs)
	expectGone(t, k8s, a)
	g.Expect(writes()).To(BeZero(), "IAS was changed: %v", tn.sim.Stats().Since(before))
	kept, ok := tn.sim.App(app.ID)
	g.Expect(ok).To(BeTrue(), "the app was deleted")
	g.Expect(kept.Secrets).To(HaveLen(len(app.Secrets)))
	for i := range app.Secrets {
		g.Expect(kept.Secrets[i].ID).To(Equal(app.Secrets[i].ID))
	}
	g.Expect(onRuntime(g, rt, tn.ns, "eventing-webhook-auth").ResourceVersion).To(Equal(onRT.ResourceVersion), "the runtime's Secret was written")
	conn := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: tn.ns, Name: id + "-creds"}, conn)).To(Succeed())
	g.Expect(conn.Data).To(Equal(creds))
	g.Expect(conn.OwnerReferences).To(BeEmpty(), "the garbage collector would delete the only copy of the client secret")
	g.Eventually(func(g Gomega) {
		g.Expect(keptEvents(g, tn.ns, "Kyma", id)).To(ContainElement(ContainSubstring("IASApplication %s/%s was deleted while this Kyma CR exists: IAS application %s", tn.ns, id, app.ID)))
		g.Expect(keptEvents(g, tn.ns, "Kyma", id)).To(ContainElement(ContainSubstring("RuntimeSecret %s/%s was deleted while this Kyma CR exists: Secret %s/eventing-webhook-auth on runtime %s", tn.ns, id, tn.ns, id)))
		g.Expect(keptEvents(g, tn.ns, "IASApplication", id)).To(ContainElement(ContainSubstring("its Kyma CR %s/%s exists", tn.ns, id)))
	}, timeout).Should(Succeed())

	// Reinstalled: the same app, client ID and secret, nothing written.
	a, rs = composed()
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	waitReady(t, a)
	waitReady(t, rs)
	g.Expect(meta.GetExternalName(get(g, a))).To(Equal(app.ID))
	g.Expect(connection(g, a)).To(Equal(creds))
	g.Expect(onRuntime(g, rt, tn.ns, "eventing-webhook-auth").ResourceVersion).To(Equal(onRT.ResourceVersion), "the runtime's Secret was written")
	g.Expect(writes()).To(BeZero(), "IAS was changed: %v", tn.sim.Stats().Since(before))
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(conn), conn)).To(Succeed())
		g.Expect(metav1.IsControlledBy(conn, a)).To(BeTrue(), "the connection Secret does not go with the resource made again")
	}, timeout).Should(Succeed())

	// The runtime goes: its Kyma CR first, then its resources.
	g.Expect(k8s.Delete(ctx, kyma)).To(Succeed())
	expectGone(t, k8s, kyma)
	g.Expect(k8s.Delete(ctx, rs)).To(Succeed())
	g.Expect(k8s.Delete(ctx, a)).To(Succeed())
	expectGone(t, k8s, a)
	_, ok = tn.sim.App(app.ID)
	g.Expect(ok).To(BeFalse(), "the app of a gone runtime stays")
	expectGone(t, rt, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tn.ns, Name: "eventing-webhook-auth"}})

	// Hand-made, deleted on purpose beside a living Kyma CR: deleted.
	g.Expect(k8s.Create(ctx, newKyma(tn.ns, "rt-by-hand", "ga-kept"))).To(Succeed())
	byHand := tn.app("rt-by-hand")
	g.Expect(k8s.Create(ctx, byHand)).To(Succeed())
	waitReady(t, byHand)
	handApp := expectPublished(g, tn, byHand)
	g.Expect(k8s.Delete(ctx, byHand)).To(Succeed())
	expectGone(t, k8s, byHand)
	_, ok = tn.sim.App(handApp.ID)
	g.Expect(ok).To(BeFalse(), "a hand-made resource deleted on purpose left its app")
}

// keptEvents are the messages of the events that say a deletion kept what a
// resource manages.
func keptEvents(g Gomega, ns, kind, name string) []string {
	l := &corev1.EventList{}
	g.Expect(k8s.List(ctx, l, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range l.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && e.Reason == string(reconciler.ReasonKeptForRuntime) {
			out = append(out, e.Message)
		}
	}
	return out
}
