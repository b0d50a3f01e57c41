package integration

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// systemAdmin is the subject the simulator maps to its system administrator.
const systemAdmin = "eventing-auth-system"

// certTenant is a tenant over TLS that accepts client certificates its CA
// signed for systemAdmin, and the admin's password too.
type certTenant struct {
	*tenant
	ca *testcerts.CA
}

func newCertTenant(t *testing.T, ns string) *certTenant {
	t.Helper()
	g := NewWithT(t)
	ca, err := testcerts.NewCA("IAS client CA")
	g.Expect(err).NotTo(HaveOccurred())
	password := "pw-" + ns + "-s3cr3t-value"
	sim, err := iassim.New(iassim.Options{Password: password, ClientCA: ca.PEM, ClientCertSubject: systemAdmin}).Serve("127.0.0.1:0", true)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = sim.Close() })
	secrets.add(sim, password)
	tn := &tenant{sim: sim, ns: ns, pcName: "ias", secret: "ias-creds", password: password, tokenURL: sim.URL + "/oauth2/token"}
	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ias-ca", Namespace: ns},
		Data: map[string][]byte{"ca.crt": sim.CAPEM}})).To(Succeed())
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: tn.pcName, Namespace: ns},
		Spec: v1alpha1.ProviderConfigSpec{
			Credentials:       v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.LocalSecretReference{Name: tn.secret}},
			CABundleSecretRef: &xpv2.LocalSecretKeySelector{LocalSecretReference: xpv2.LocalSecretReference{Name: "ias-ca"}, Key: "ca.crt"},
		},
	}
	g.Expect(k8s.Create(ctx, pc)).To(Succeed())
	return &certTenant{tenant: tn, ca: ca}
}

// issue signs a certificate for cn valid from now-1h for validFor.
func (ct *certTenant) issue(t *testing.T, ca *testcerts.CA, cn string, validFor time.Duration) *testcerts.Client {
	t.Helper()
	c, err := ca.Issue(cn, time.Now().Add(-time.Hour), time.Now().Add(validFor))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	secrets.add(nil, strings.TrimSpace(string(c.KeyPEM)))
	return c
}

// useCertificate replaces the credentials Secret with url and c.
func (ct *certTenant) useCertificate(t *testing.T, c *testcerts.Client) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ct.secret, Namespace: ct.ns}}
	_, err := ctrl.CreateOrUpdate(context.Background(), k8s, s, func() error {
		s.StringData = nil
		s.Data = map[string][]byte{"url": []byte(ct.sim.URL), "tls.crt": c.CertPEM, "tls.key": c.KeyPEM}
		return nil
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
}

// usePassword replaces the credentials Secret with the admin's password.
func (ct *certTenant) usePassword(t *testing.T) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ct.secret, Namespace: ct.ns}}
	_, err := ctrl.CreateOrUpdate(context.Background(), k8s, s, func() error {
		s.StringData = nil
		s.Data = map[string][]byte{"url": []byte(ct.sim.URL), "username": []byte("admin"), "password": []byte(ct.password)}
		return nil
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
}

// logons counts the simulator's answered API calls by how they logged on and
// by status: "certificate <serial> 200", "basic 201".
func logons(sim *iassim.Running) map[string]int {
	out := map[string]int{}
	for _, r := range sim.Requests() {
		if r.Operation == "well_known" {
			continue
		}
		out[r.Auth+" "+strconv.Itoa(r.Status)]++
	}
	return out
}

// firstUse waits for the first call that logged on with c and returns when it came.
func firstUse(t *testing.T, sim *iassim.Running, c *testcerts.Client) time.Time {
	t.Helper()
	var at time.Time
	NewWithT(t).Eventually(func() bool {
		for _, r := range sim.Requests() {
			if r.Auth == "certificate "+c.Cert.SerialNumber.String() {
				at = r.Time
				return true
			}
		}
		return false
	}, timeout, 200*time.Millisecond).Should(BeTrue(), "certificate %s was never used", c.Cert.SerialNumber)
	return at
}

// testCertificateLogin: with a PEM client certificate in the credentials
// Secret, apps and secrets are made over mutual TLS with no password; a PKCS#12
// bundle works alike.
func testCertificateLogin(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ct := newCertTenant(t, newNamespace(t))
	c := ct.issue(t, ct.ca, systemAdmin, 90*24*time.Hour)
	ct.useCertificate(t, c)
	a := ct.app("runtime-cert-login")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	expectPublished(g, ct.tenant, a)
	for k := range logons(ct.sim) {
		g.Expect(k).To(HavePrefix("certificate "+c.Cert.SerialNumber.String()+" "), "a call logged on otherwise: %v", logons(ct.sim))
	}

	// A PKCS#12 bundle, as IAS hands it out, instead.
	p := ct.issue(t, ct.ca, systemAdmin, 90*24*time.Hour)
	bundle, err := p.PKCS12("p12-s3cr3t-pass")
	g.Expect(err).NotTo(HaveOccurred())
	secrets.add(nil, "p12-s3cr3t-pass")
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ct.secret, Namespace: ct.ns}}
	_, err = ctrl.CreateOrUpdate(ctx, k8s, s, func() error {
		s.Data = map[string][]byte{"url": []byte(ct.sim.URL), "pkcs12": bundle, "pkcs12Password": []byte("p12-s3cr3t-pass")}
		return nil
	})
	g.Expect(err).NotTo(HaveOccurred())
	b := ct.app("runtime-cert-login-p12")
	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	waitReady(t, b)
	g.Expect(logons(ct.sim)).To(HaveKey("certificate "+p.Cert.SerialNumber.String()+" 201"), "the app was made with the PKCS#12 certificate")
}

// testCertificateRotated: a certificate replaced in the Secret is used from
// the next call on, with no failed call, no restart and every resource Ready
// throughout; the connections made with the old one are not used again.
func testCertificateRotated(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ct := newCertTenant(t, newNamespace(t))
	old := ct.issue(t, ct.ca, systemAdmin, 90*24*time.Hour)
	ct.useCertificate(t, old)
	apps := []*iasv1alpha1.IASApplication{ct.app("runtime-rotated-cert-a"), ct.app("runtime-rotated-cert-b")}
	for _, a := range apps {
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
	}
	for _, a := range apps {
		waitReady(t, a)
	}
	renewed := ct.issue(t, ct.ca, systemAdmin, 180*24*time.Hour)
	ct.sim.ResetStats()
	ct.useCertificate(t, renewed)
	switched := firstUse(t, ct.sim, renewed)
	// Some polls later: all Ready, nothing refused, the old one unused.
	g.Consistently(func(g Gomega) {
		for _, a := range apps {
			s, _ := condition(g, a, xpv2.TypeReady)
			g.Expect(s).To(Equal(corev1.ConditionTrue))
		}
	}, 4*poll, 500*time.Millisecond).Should(Succeed())
	for _, r := range ct.sim.Requests() {
		g.Expect(r.Status).NotTo(Equal(401), "a call failed to log on after the rotation")
		if r.Auth == "certificate "+old.Cert.SerialNumber.String() {
			g.Expect(r.Time).To(BeTemporally("<", switched.Add(2*time.Second)), "the old certificate was used after the renewed one")
		}
	}
}

// testCertificateExpiredOrUntrusted: an expired certificate is refused before
// any call; one IAS does not trust costs one failed logon, not one per retry;
// both say so on the resource. One expiring within 30 days warns on the
// ProviderConfig and its expiry is a metric.
func testCertificateExpiredOrUntrusted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ct := newCertTenant(t, newNamespace(t))
	expired, err := ct.ca.Issue(systemAdmin, time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	ct.useCertificate(t, expired)
	a := ct.app("runtime-expired-cert")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	expectSyncedFalse(t, a, "client certificate (CN="+systemAdmin+") expired at")
	expectSyncedFalse(t, a, "credentials Secret "+ct.ns+"/"+ct.secret)
	time.Sleep(2 * poll)
	g.Expect(logons(ct.sim)).To(BeEmpty(), "calls were made with an expired certificate")

	otherCA, err := testcerts.NewCA("a CA IAS does not trust")
	g.Expect(err).NotTo(HaveOccurred())
	ct.useCertificate(t, ct.issue(t, otherCA, systemAdmin, 90*24*time.Hour))
	expectSyncedFalse(t, a, "rejected the credentials")
	time.Sleep(5 * poll)
	refused := 0
	for k, n := range logons(ct.sim) {
		if strings.HasSuffix(k, " 401") {
			refused += n
		}
	}
	g.Expect(refused).To(Equal(1), "failed logons with an untrusted certificate: %v", logons(ct.sim))

	soon := ct.issue(t, ct.ca, systemAdmin, 10*24*time.Hour)
	ct.useCertificate(t, soon)
	waitReady(t, a)
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: ct.pcName, Namespace: ct.ns}}
	g.Eventually(func(g Gomega) {
		l := &corev1.EventList{}
		g.Expect(k8s.List(ctx, l, client.InNamespace(ct.ns))).To(Succeed())
		var found bool
		for _, e := range l.Items {
			found = found || e.InvolvedObject.Kind == "ProviderConfig" && e.InvolvedObject.Name == ct.pcName &&
				e.Reason == "ClientCertificateExpiring" && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "in 9 days")
		}
		g.Expect(found).To(BeTrue(), "no ClientCertificateExpiring event on ProviderConfig %s", client.ObjectKeyFromObject(pc))
	}, timeout, 500*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(scrape(g)).To(HaveKeyWithValue(`eventing_auth_ias_client_certificate_expiry_timestamp_seconds{provider_config="ProviderConfig/`+ct.ns+`/`+ct.pcName+`"}`, float64(soon.Cert.NotAfter.Unix())))
	}, timeout, 500*time.Millisecond).Should(Succeed())
}

// testPasswordToCertificate: a ProviderConfig switched from a password to a
// certificate keeps every app, secret and runtime Secret as it was.
func testPasswordToCertificate(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ct := newCertTenant(t, newNamespace(t))
	ct.usePassword(t)
	newRuntimeNamespace(t, rt, ct.ns)
	putKubeconfig(t, ct.ns, "rt-switch", newKubeconfig(t, rtEnv, "rt-switch"))
	a := ct.app("rt-switch")
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	rs := runtimeSecretOfApp(ct.ns, "rt-switch", "rt-switch", a.Name)
	g.Expect(k8s.Create(ctx, rs)).To(Succeed())
	waitReady(t, a)
	waitReady(t, rs)
	before := onRuntime(g, rt, ct.ns, "eventing-webhook-auth")
	app := expectPublished(g, ct.tenant, a)
	conn := connection(g, a)

	c := ct.issue(t, ct.ca, systemAdmin, 90*24*time.Hour)
	ct.sim.ResetStats()
	ct.useCertificate(t, c)
	switched := firstUse(t, ct.sim, c)
	time.Sleep(3 * poll)
	for _, r := range ct.sim.Requests() {
		g.Expect(r.Status).NotTo(Equal(401), "a call failed to log on")
		if r.Auth == "basic" {
			g.Expect(r.Time).To(BeTemporally("<", switched.Add(2*time.Second)), "the password was used after the switch")
		}
	}
	s, _ := condition(g, a, xpv2.TypeReady)
	g.Expect(s).To(Equal(corev1.ConditionTrue))
	g.Expect(connection(g, a)).To(Equal(conn), "the connection Secret changed")
	after, _ := ct.sim.App(app.ID)
	g.Expect(after.Secrets).To(HaveLen(len(app.Secrets)), "an api secret was made or deleted")
	g.Expect(onRuntime(g, rt, ct.ns, "eventing-webhook-auth").ResourceVersion).To(Equal(before.ResourceVersion), "the runtime's Secret was written")
}
