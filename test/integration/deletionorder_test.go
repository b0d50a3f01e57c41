package integration

import (
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// testDeletionOrder: an IASApplication deleted while a RuntimeSecret carries
// its credentials waits for it, saying so, and leaves the app in IAS and the
// Secret on the runtime; deleting both at once (as the garbage collector does
// for an EventingAuth) removes the Secret from the runtime before the app from
// IAS.
func testDeletionOrder(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	newRuntimeNamespace(t, rt, tn.ns)
	putKubeconfig(t, tn.ns, "rt-order", newKubeconfig(t, rtEnv, "rt-order"))
	a := tn.app("rt-order")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	rs := runtimeSecretOfApp(tn.ns, "rt-order", "rt-order", a.Name)
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	waitReady(t, rs)
	onRuntimeKey := types.NamespacedName{Namespace: tn.ns, Name: "eventing-webhook-auth"}

	g.Expect(k8s.Delete(ctx, a)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, a)
		c := a.GetCondition(xpv2.TypeReady)
		g.Expect(c.Reason).To(Equal(iasapplication.ReasonWaitingForRuntimeSecrets))
		g.Expect(c.Message).To(ContainSubstring("waiting for RuntimeSecret rt-order to be deleted"))
	}, timeout, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(tn.sim.Apps()).To(HaveLen(1))
		g.Expect(rt.Get(ctx, onRuntimeKey, &corev1.Secret{})).To(Succeed())
	}, 2*time.Second, 100*time.Millisecond).Should(Succeed())

	// The RuntimeSecret goes: the Secret leaves the runtime, then the app IAS.
	g.Expect(k8s.Delete(ctx, rs)).To(Succeed())
	secretGone, appGone := removals(t, tn, onRuntimeKey)
	expectGone(t, k8s, a)
	// Woken by the RuntimeSecret's deletion, not by a poll.
	g.Expect(appGone.Sub(secretGone)).To(BeNumerically("<", poll), "the app's deletion waited for a poll")

	// Both deleted at once, as the garbage collector deletes an EventingAuth's parts.
	b := tn.app("rt-order-2")
	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	putKubeconfig(t, tn.ns, "rt-order-2", newKubeconfig(t, rtEnv, "rt-order-2"))
	rs2 := runtimeSecretOfApp(tn.ns, "rt-order-2", "rt-order-2", b.Name)
	rs2.Spec.ForProvider.Target.Name = "second"
	g.Expect(k8s.Create(ctx, rs2)).To(Succeed())
	waitReady(t, rs2)
	for _, o := range []client.Object{b, rs2} {
		g.Expect(k8s.Delete(ctx, o)).To(Succeed())
	}
	secondKey := types.NamespacedName{Namespace: tn.ns, Name: "second"}
	removals(t, tn, secondKey)
	expectGone(t, k8s, &iasv1alpha1.IASApplication{ObjectMeta: b.ObjectMeta})
	expectGone(t, k8s, &runtimev1alpha1.RuntimeSecret{ObjectMeta: rs2.ObjectMeta})
}

// removals waits until the Secret at key is gone from the runtime and the
// tenant holds no app, fails if the app went first, and returns when each went.
func removals(t *testing.T, tn *tenant, key types.NamespacedName) (secretGone, appGone time.Time) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		now := time.Now()
		if secretGone.IsZero() && kerrors.IsNotFound(rt.Get(ctx, key, &corev1.Secret{})) {
			secretGone = now
		}
		if appGone.IsZero() && len(tn.sim.Apps()) == 0 {
			appGone = now
		}
		g.Expect(secretGone.IsZero() || appGone.IsZero()).To(BeFalse())
	}, timeout, 20*time.Millisecond).Should(Succeed())
	g.Expect(appGone.Before(secretGone)).To(BeFalse(), "the IAS app was deleted while its Secret was still on the runtime")
	return secretGone, appGone
}
