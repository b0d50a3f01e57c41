package integration

import (
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// requests counts every request the tenant answered.
func requests(sim *iassim.Running) int {
	n := 0
	for op := range sim.Stats() {
		n += sim.Stats().Count(op, 0)
	}
	return n
}

// testPlatformCredentialsWhereAdmitted: a ClusterProviderConfig acts only for
// the namespaces it admits. The hostile inputs: an app that
// eventing-auth-manager made (no description, one api secret described
// eventing-auth-manager that the runtime uses) named from a namespace the
// config does not admit, by name and with that description and no grace
// period; a Ready runtime's app named from an admitted namespace. None takes
// the app, makes a second one of its name, or retires the runtime's secret.
func testPlatformCredentialsWhereAdmitted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	platform := newTenant(t, newNamespace(t), iassim.Options{})
	cpc := &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "platform-" + platform.ns},
		Spec: v1alpha1.ClusterProviderConfigSpec{
			Credentials: v1alpha1.ClusterCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.SecretReference{Name: platform.secret, Namespace: platform.ns}},
			Namespaces:  []string{platform.ns},
		},
	}
	g.Expect(k8s.Create(ctx, cpc)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(ctx, cpc) })
	onPlatform := func(ns, name string) *iasv1alpha1.IASApplication {
		a := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		a.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: cpc.Name})
		a.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: name + "-creds"})
		return a
	}
	operatorApp := platform.sim.AddApp(iassim.App{Name: "runtime-eam", DisplayName: "runtime-eam",
		Secrets: []iassim.Secret{{Description: "eventing-auth-manager", AuthorizationScopes: []string{"oAuth"}}}})
	stored, _ := platform.sim.App(operatorApp)
	runtimeSecret := stored.Secrets[0]

	// From a namespace the config does not admit: refused before any call.
	tenantB := newNamespace(t)
	byName := onPlatform(tenantB, "intruder-by-name")
	byName.Spec.ForProvider.Name = "runtime-eam"
	retiring := onPlatform(tenantB, "intruder-retiring")
	retiring.Spec.ForProvider.Name = "runtime-eam"
	retiring.Spec.ForProvider.Secret.Description = "eventing-auth-manager"
	retiring.Spec.ForProvider.Secret.RetireAfter = &metav1.Duration{}
	before := requests(platform.sim)
	for _, intruder := range []*iasv1alpha1.IASApplication{byName, retiring} {
		g.Expect(k8s.Create(ctx, intruder)).To(Succeed())
	}
	for _, intruder := range []*iasv1alpha1.IASApplication{byName, retiring} {
		expectSyncedFalse(t, intruder, "ClusterProviderConfig "+cpc.Name+" does not admit managed resources of namespace "+tenantB)
	}
	g.Consistently(func(g Gomega) {
		g.Expect(requests(platform.sim)).To(Equal(before), "a resource of a namespace the config does not admit called IAS")
		// A usage would keep the platform's config from being deleted.
		usages := &v1alpha1.ProviderConfigUsageList{}
		g.Expect(k8s.List(ctx, usages, client.InNamespace(tenantB))).To(Succeed())
		g.Expect(usages.Items).To(BeEmpty(), "a namespace the config does not admit holds a usage of it")
	}, 2*poll, 200*time.Millisecond).Should(Succeed())
	for _, intruder := range []*iasv1alpha1.IASApplication{byName, retiring} {
		g.Expect(k8s.Delete(ctx, intruder)).To(Succeed())
		waitGone(t, intruder)
	}
	stored, exists := platform.sim.App(operatorApp)
	g.Expect(exists).To(BeTrue(), "an intruder's deletion deleted the app")
	g.Expect(stored.Description).To(BeEmpty(), "an intruder stamped the app")
	g.Expect(stored.Secrets).To(ConsistOf(runtimeSecret))

	// Admitted, with the operator's secret description and no grace period:
	// adopted, a secret of its own published, and the runtime's secret kept,
	// since no RuntimeSecret carries the new one.
	adopter := onPlatform(platform.ns, "runtime-eam")
	adopter.Spec.ForProvider.Secret.Description = "eventing-auth-manager"
	adopter.Spec.ForProvider.Secret.RetireAfter = &metav1.Duration{}
	g.Expect(k8s.Create(ctx, adopter)).To(Succeed())
	waitReady(t, adopter)
	g.Expect(meta.GetExternalName(get(g, adopter))).To(Equal(operatorApp))
	g.Expect(connection(g, adopter)["client_secret"]).NotTo(BeEquivalentTo(runtimeSecret.Value))
	g.Consistently(func(g Gomega) {
		app, _ := platform.sim.App(operatorApp)
		g.Expect(app.Secrets).To(ContainElement(runtimeSecret), "the runtime's secret was retired")
	}, 3*poll, 200*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, adopter)
		g.Expect(adopter.Status.AtProvider.Retiring).To(ContainElement(HaveField("WaitingFor", ContainSubstring("came with the application"))))
	}, timeout, 200*time.Millisecond).Should(Succeed())

	// A second resource of an admitted namespace names the owned app: refused,
	// naming the owner; no second app of the name is made.
	second := onPlatform(platform.ns, "second-by-name")
	second.Spec.ForProvider.Name = "runtime-eam"
	g.Expect(k8s.Create(ctx, second)).To(Succeed())
	expectSyncedFalse(t, second, "belongs to IASApplication "+platform.ns+"/runtime-eam")
	g.Consistently(func(g Gomega) {
		g.Expect(platform.sim.AppsNamed("runtime-eam")).To(HaveLen(1), "a second app of the name was made")
	}, 2*poll, 200*time.Millisecond).Should(Succeed())
	g.Expect(k8s.Delete(ctx, second)).To(Succeed())
	waitGone(t, second)
	_, exists = platform.sim.App(operatorApp)
	g.Expect(exists).To(BeTrue(), "the second resource's deletion deleted the owner's app")
	g.Expect(kerrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: platform.ns, Name: "second-by-name-creds"}, &corev1.Secret{}))).To(BeTrue())
}
