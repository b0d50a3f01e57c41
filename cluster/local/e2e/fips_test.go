//go:build e2e

package e2e

import (
	"context"
	"regexp"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// adminSubject is the common name of the IAS system administrator whose
// certificate the tenant accepts.
const adminSubject = "eventing-auth-admin"

// expectFIPSOnly checks that a process of the stack runs with Go's FIPS 140-3
// module v1.0.0 enforced (GODEBUG=fips140=only from its package's image), as
// it says when it starts.
func expectFIPSOnly(g Gomega, what, log string) {
	for _, want := range []string{`"fips140Module":\s*"v1\.0\.0`, `"fips140Enforced":\s*true`} {
		g.Expect(regexp.MustCompile(want).MatchString(log)).To(BeTrue(), "%s does not log %s; its log begins:\n%s", what, want, log[:min(len(log), 2000)])
	}
}

// certificateLogon makes an IAS app through a ClusterProviderConfig that logs
// on with a system administrator's client certificate (mutual TLS, no
// password) and deletes it again; every call the provider made for it was
// logged on with that certificate.
func certificateLogon(ctx context.Context, g Gomega, s *localstack.Stack, ca *testcerts.CA) {
	const timeout, interval = time.Minute, 250 * time.Millisecond
	now := time.Now()
	cert, err := ca.Issue(adminSubject, now.Add(-time.Hour), now.Add(24*time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eventing-auth-ias-cert", Namespace: localstack.KCPNamespace},
		Data: map[string][]byte{"url": []byte(s.Sim.URL), "tls.crt": cert.CertPEM, "tls.key": cert.KeyPEM}}
	g.Expect(s.Kube.Create(ctx, creds)).To(Succeed())
	g.Expect(s.CreateTenantConfig(ctx, "certificate", creds.Name, "")).To(Succeed())

	app := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "certificate-logon", Namespace: localstack.KCPNamespace}}
	app.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "certificate"}
	app.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "certificate-logon-ias"})
	g.Expect(s.Kube.Create(ctx, app)).To(Succeed())
	key := client.ObjectKeyFromObject(app)
	g.Eventually(func(g Gomega) {
		g.Expect(s.Kube.Get(ctx, key, app)).To(Succeed())
		g.Expect(app.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue), "conditions: %v", app.Status.Conditions)
	}, timeout, interval).Should(Succeed())
	g.Expect(s.Sim.AppsNamed("certificate-logon")).To(HaveLen(1))
	g.Expect(s.Kube.Delete(ctx, app)).To(Succeed())
	g.Eventually(func() bool { return kerrors.IsNotFound(s.Kube.Get(ctx, key, app)) }, timeout, interval).Should(BeTrue())
	g.Expect(s.Sim.AppsNamed("certificate-logon")).To(BeEmpty())

	logon := "certificate " + cert.Cert.SerialNumber.String()
	seen := map[string]bool{}
	for _, r := range s.Sim.Requests() {
		if r.Auth == logon {
			seen[r.Operation] = true
		}
	}
	for _, op := range []string{operation.CreateApplication, operation.CreateAPISecret, operation.DeleteApplication} {
		g.Expect(seen[op]).To(BeTrue(), "no %s logged on with the certificate; seen: %s", op, strings.Join(keysOf(seen), ", "))
	}
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
