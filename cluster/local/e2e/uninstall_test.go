//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// TestConfigurationRemovedAndReinstalled deletes the EventingAuth
// Configuration with runtimes Ready, as a mistyped cleanup or a GitOps prune
// does, and then its EventingAuths: the XRD, every EventingAuth and, through
// the garbage collector, every composed resource go, while the Kyma CRs stay.
// No runtime's Secret and no IAS app or api secret changes at any point; each
// Kyma CR is told what was kept. Reinstalled, every runtime is Ready again with the same
// app, client ID and secret, and a deleted Kyma CR still takes its credentials
// with it.
func TestConfigurationRemovedAndReinstalled(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const timeout, interval = 3 * time.Minute, 250 * time.Millisecond
	s, _, ids := readyRuntimes(t, g, ctx, "runtime-kept", 3, timeout)
	observe := func(g Gomega) map[string]runtimeState { return runtimeStates(g, ctx, s, ids) }
	// Let every runtime's first polls settle before taking the baseline.
	time.Sleep(12 * time.Second)
	before := observe(g)
	for _, id := range ids {
		g.Expect(before[id].clientID).NotTo(BeEmpty(), id)
		g.Expect(before[id].secretValue).NotTo(BeEmpty(), id)
	}
	changes := func() iassim.Stats { return iasWrites(s) }
	unchanged := changes()

	// The Configuration goes, as `kubectl delete configuration` does it.
	// The XRD goes into deletion. Crossplane core v2.4.2 then deletes its
	// composite resources with one DeleteAllOf across all namespaces, which
	// the API server answers 404 for a namespaced kind and core ignores: the
	// EventingAuths stay, the XRD waits for them. Nothing of a runtime changes
	// meanwhile, and the kyma bridge makes no EventingAuth again.
	reinstall := removeConfiguration(g, ctx, s, timeout, interval)
	time.Sleep(10 * time.Second)
	g.Expect(observe(g)).To(Equal(before), "a runtime Secret or an IAS app changed while the XRD went")
	// So a person, or the GitOps tool that pruned the Configuration, deletes
	// the EventingAuths, as core would have.
	xrs := &unstructured.UnstructuredList{}
	xrs.SetAPIVersion("composite.eventingauth.kyma-project.io/v1alpha1")
	xrs.SetKind("EventingAuthList")
	g.Expect(s.Kube.List(ctx, xrs, client.InNamespace(localstack.KCPNamespace))).To(Succeed())
	g.Expect(xrs.Items).To(HaveLen(len(ids)))
	for i := range xrs.Items {
		g.Expect(s.Kube.Delete(ctx, &xrs.Items[i])).To(Succeed())
	}
	// Every EventingAuth, every composed resource and the definition go; the
	// runtimes' credentials are watched all along.
	g.Eventually(func(g Gomega) {
		g.Expect(observe(g)).To(Equal(before), "a runtime Secret or an IAS app changed while the Configuration went")
		err := s.Kube.Get(ctx, client.ObjectKey{Name: "eventingauths.composite.eventingauth.kyma-project.io"}, &apiextensionsv1.CustomResourceDefinition{})
		g.Expect(kerrors.IsNotFound(err)).To(BeTrue(), "the EventingAuth CRD is still there: %v", err)
		for _, l := range []client.ObjectList{&iasv1alpha1.IASApplicationList{}, &runtimev1alpha1.RuntimeSecretList{}} {
			g.Expect(s.Kube.List(ctx, l, client.InNamespace(localstack.KCPNamespace))).To(Succeed())
			g.Expect(l).To(HaveField("Items", BeEmpty()), "%T left", l)
		}
	}, timeout, interval).Should(Succeed())
	g.Expect(changes()).To(Equal(unchanged), "IAS was changed by the removal")
	for _, id := range ids {
		g.Expect(keptOn(g, ctx, s, id)).To(ContainElements(
			ContainSubstring("IASApplication %s/%s was deleted while this Kyma CR exists", localstack.KCPNamespace, id),
			ContainSubstring("RuntimeSecret %s/%s was deleted while this Kyma CR exists", localstack.KCPNamespace, id)), id)
		conn := &corev1.Secret{}
		g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: id + "-ias"}, conn)).To(Succeed(), "the connection Secret went: %s", id)
		g.Expect(string(conn.Data["client_secret"])).To(Equal(before[id].secretValue), id)
	}

	// Reinstalled: every runtime Ready again, nothing changed on it or in IAS.
	reinstall()
	g.Eventually(func(g Gomega) {
		g.Expect(observe(g)).To(Equal(before))
		expectReady(g, ctx, s, ids)
	}, timeout, interval).Should(Succeed())
	for _, id := range ids {
		a := &iasv1alpha1.IASApplication{}
		g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: id}, a)).To(Succeed())
		g.Expect(a.Status.AtProvider.ID).To(Equal(before[id].appID), id)
		g.Expect(a.Status.AtProvider.ClientID).To(Equal(before[id].clientID), id)
	}
	// A full poll of every resource after the reinstall.
	time.Sleep(12 * time.Second)
	g.Expect(observe(g)).To(Equal(before))
	g.Expect(changes()).To(Equal(unchanged), "IAS was changed by the reinstall")

	// A runtime that goes still takes its credentials with it.
	gone := ids[0]
	kyma := &unstructured.Unstructured{}
	kyma.SetAPIVersion("operator.kyma-project.io/v1beta2")
	kyma.SetKind("Kyma")
	kyma.SetNamespace(localstack.KCPNamespace)
	kyma.SetName(gone)
	g.Expect(s.Kube.Delete(ctx, kyma)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := s.RuntimeKube.Get(ctx, types.NamespacedName{Namespace: gone, Name: "eventing-webhook-auth"}, &corev1.Secret{})
		g.Expect(kerrors.IsNotFound(err)).To(BeTrue(), "the runtime's Secret of a deleted Kyma CR: %v", err)
		g.Expect(s.Sim.AppsNamed(gone)).To(BeEmpty())
	}, timeout, interval).Should(Succeed())
}

// keptOn are the messages of the events on a Kyma CR that say a deletion kept
// its runtime's credentials.
func keptOn(g Gomega, ctx context.Context, s *localstack.Stack, id string) []string {
	l := &corev1.EventList{}
	g.Expect(s.Kube.List(ctx, l, client.InNamespace(localstack.KCPNamespace))).To(Succeed())
	var out []string
	for _, e := range l.Items {
		if e.InvolvedObject.Kind == "Kyma" && e.InvolvedObject.Name == id && e.Reason == string(reconciler.ReasonKeptForRuntime) {
			out = append(out, e.Message)
		}
	}
	return out
}
