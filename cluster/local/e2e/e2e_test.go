//go:build e2e

// Package e2e runs the whole flow on this machine as a user installs it:
// Crossplane core's package manager installs the packages built here from an
// OCI registry on loopback; the composition functions, kube-controller-manager's
// garbage collector, the provider and the IAS simulator run as local processes
// against two local API servers. Run by `make e2e`.
package e2e

import (
	"context"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

const runtimeID = "3f1e2d4c-5b6a-4789-8c0d-e2e000000001"

func TestKymaToRuntimeSecretAndBack(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// The tenant also accepts its system administrator's client certificate.
	adminCA, err := testcerts.NewCA("IAS administrators")
	g.Expect(err).NotTo(HaveOccurred())
	s := startStack(t, ctx, localstack.Options{ProviderArgs: []string{"--poll=10s", "--debug"},
		Sim: iassim.Options{ClientCA: adminCA.PEM, ClientCertSubject: adminSubject}})
	const timeout, interval = 2 * time.Minute, 250 * time.Millisecond

	// Installed by Crossplane's package manager from cluster/install.yaml.
	g.Eventually(func(g Gomega) { expectInstalled(g, ctx, s, localstack.InstallVersion) }, timeout, interval).Should(Succeed())
	// The provider and the function were published for both platforms.
	for _, pkg := range []string{"provider-eventing-auth", "function-eventing-auth"} {
		expectPlatforms(g, ctx, s, "ghcr.io/kyma-project/"+pkg+":"+localstack.InstallVersion, "linux/amd64", "linux/arm64")
	}

	// The runtime exists: its kyma-system namespace and its kubeconfig Secret.
	g.Expect(s.AddRuntime(ctx, runtimeID)).To(Succeed())
	kyma, err := s.CreateKyma(ctx, runtimeID, "ga-e2e")
	g.Expect(err).NotTo(HaveOccurred())

	// Kyma CR -> a Ready EventingAuth -> an app in IAS and the Secret on the runtime.
	xr := &unstructured.Unstructured{}
	xr.SetGroupVersionKind(eventingauth.Kind)
	key := client.ObjectKey{Namespace: localstack.KCPNamespace, Name: runtimeID}
	g.Eventually(func(g Gomega) {
		g.Expect(s.Kube.Get(ctx, key, xr)).To(Succeed())
		g.Expect(localstack.Condition(xr, "Ready")).To(Equal("True"), "EventingAuth conditions: %v", xr.Object["status"])
	}, timeout, interval).Should(Succeed())
	apps := s.Sim.AppsNamed(runtimeID)
	g.Expect(apps).To(HaveLen(1))
	// The ClusterProviderConfig's, not the Kyma CR's label: every app gets
	// the platform's, as eventing-auth-manager sent it.
	g.Expect(apps[0].GlobalAccount).To(Equal(localstack.PlatformGlobalAccount))
	conn := &corev1.Secret{}
	g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: runtimeID + "-ias"}, conn)).To(Succeed())
	onRuntime := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(s.RuntimeKube.Get(ctx, client.ObjectKey{Namespace: "kyma-system", Name: "eventing-webhook-auth"}, onRuntime)).To(Succeed())
		g.Expect(onRuntime.Data).To(Equal(conn.Data))
	}, timeout, interval).Should(Succeed())
	g.Expect(string(onRuntime.Data["client_id"])).To(Equal(apps[0].ClientID))

	// `crossplane resource trace`, as make local-up prints it, shows the
	// EventingAuth, the IASApplication and the RuntimeSecret, each Ready.
	g.Eventually(func(g Gomega) {
		tree, err := s.Trace(ctx, runtimeID)
		g.Expect(err).NotTo(HaveOccurred())
		var parts []string
		tree.Walk(func(n localstack.TraceNode) {
			parts = append(parts, n.Object.Kind)
			g.Expect(n.Condition("Ready")).To(Equal("True"), "%s is not Ready in the trace", n)
		})
		g.Expect(parts).To(ConsistOf("EventingAuth", "IASApplication", "RuntimeSecret"))
	}, timeout, time.Second).Should(Succeed())

	// Everything above ran in FIPS 140-only mode: the provider (IAS over TLS
	// with a password, the runtime's API server over TLS) and the composition
	// function. IAS with a client certificate too:
	expectFIPSOnly(g, "the provider", s.Provider().Log())
	expectFIPSOnly(g, "the composition function", s.Named("function-eventing-auth").Log())
	certificateLogon(ctx, g, s, adminCA)

	// The platform sets a secret rotation once: this runtime's secret is
	// replaced without a moment in which it does not work.
	rotateFromPlatform(ctx, g, s, runtimeID)

	// Kyma CR deleted -> the EventingAuth goes; the RuntimeSecret (and the Secret
	// on the runtime) before the IASApplication (and the app in IAS).
	app := &iasv1alpha1.IASApplication{}
	rs := &runtimev1alpha1.RuntimeSecret{}
	g.Expect(s.Kube.Get(ctx, key, rs)).To(Succeed())
	// The IASApplication deleted on its own while its RuntimeSecret exists waits
	// for it, says so, and leaves the app in IAS and the Secret on the runtime.
	g.Expect(s.Kube.Get(ctx, key, app)).To(Succeed())
	g.Expect(s.Kube.Delete(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(s.Kube.Get(ctx, key, app)).To(Succeed())
		g.Expect(app.GetCondition(xpv2.TypeReady).Reason).To(Equal(iasapplication.ReasonWaitingForRuntimeSecrets), "conditions: %v", app.Status.Conditions)
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(s.Sim.AppsNamed(runtimeID)).To(HaveLen(1))
		g.Expect(s.RuntimeKube.Get(ctx, client.ObjectKey{Namespace: "kyma-system", Name: "eventing-webhook-auth"}, &corev1.Secret{})).To(Succeed())
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(s.Kube.Delete(ctx, kyma)).To(Succeed())
	var rsGone, appGone time.Time
	g.Eventually(func(g Gomega) {
		now := time.Now()
		if rsGone.IsZero() && kerrors.IsNotFound(s.Kube.Get(ctx, key, &runtimev1alpha1.RuntimeSecret{})) {
			rsGone = now
		}
		if appGone.IsZero() && kerrors.IsNotFound(s.Kube.Get(ctx, key, &iasv1alpha1.IASApplication{})) {
			appGone = now
		}
		g.Expect(rsGone.IsZero() || appGone.IsZero()).To(BeFalse(), "RuntimeSecret gone: %v, IASApplication gone: %v", !rsGone.IsZero(), !appGone.IsZero())
	}, timeout, 50*time.Millisecond).Should(Succeed())
	g.Expect(appGone.After(rsGone)).To(BeTrue(), "the IASApplication went before the RuntimeSecret")
	err = s.RuntimeKube.Get(ctx, client.ObjectKey{Namespace: "kyma-system", Name: "eventing-webhook-auth"}, &corev1.Secret{})
	g.Expect(kerrors.IsNotFound(err)).To(BeTrue(), "the Secret is still on the runtime: %v", err)
	g.Expect(s.Sim.AppsNamed(runtimeID)).To(BeEmpty())
	g.Eventually(func() bool { return kerrors.IsNotFound(s.Kube.Get(ctx, key, xr)) }, timeout, interval).Should(BeTrue())
	g.Expect(s.ProviderRestarts()).To(BeZero(), "the provider exited")
}
