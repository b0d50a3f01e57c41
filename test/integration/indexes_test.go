package integration

import (
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/runtimesecret"
)

// testIndexedLookups: the provider's cache answers the lookups that wake a
// RuntimeSecret and hold an IASApplication's deletion (the RuntimeSecrets
// using a Secret or an IASApplication, in its namespace) and the runtime
// watcher's (a runtime's RuntimeSecrets, in every namespace); a namesake in
// another namespace never answers a namespace's lookup.
func testIndexedLookups(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	a, b := newNamespace(t), newNamespace(t)
	id := "rt-indexed-" + a
	for _, ns := range []string{a, b} {
		rs := runtimeSecret(ns, "rs", id, "creds")
		rs.Spec.ForProvider.ApplicationRef = &xpv2.NamespacedReference{Name: "app"}
		g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	}
	kubeconfig, _ := runtimeSecret(a, "rs", id, "creds").KubeconfigSecret()
	lookups := []struct{ field, value string }{
		{runtimev1alpha1.IndexSecrets, "creds"},
		{runtimev1alpha1.IndexSecrets, kubeconfig},
		{runtimev1alpha1.IndexApplication, "app"},
	}
	g.Eventually(func(g Gomega) {
		for _, ns := range []string{a, b} {
			for _, by := range lookups {
				l := &runtimev1alpha1.RuntimeSecretList{}
				g.Expect(informers.List(ctx, l, client.InNamespace(ns), client.MatchingFields{by.field: by.value})).To(Succeed())
				g.Expect(l.Items).To(HaveLen(1), "%s=%s in %s", by.field, by.value, ns)
				g.Expect(l.Items[0].Namespace).To(Equal(ns), "%s=%s in %s", by.field, by.value, ns)
			}
		}
		targets, err := runtimesecret.Targets{Reader: informers}.Of(ctx, id)
		g.Expect(err).NotTo(HaveOccurred())
		var in []string
		for _, tg := range targets {
			in = append(in, tg.RuntimeSecret.Namespace)
		}
		g.Expect(in).To(ConsistOf(a, b), "runtime %s's RuntimeSecrets", id)
	}, timeout, 100*time.Millisecond).Should(Succeed())
}
