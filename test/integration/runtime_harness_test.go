package integration

import (
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// addUser serialises envtest's user creation, which is not safe for concurrent use.
var addUser sync.Mutex

// newKubeconfig returns a kubeconfig of a new user with full access to env's API
// server, with inline client certificate data, and records its secret parts.
func newKubeconfig(t testing.TB, env *envtest.Environment, user string) []byte {
	t.Helper()
	g := NewWithT(t)
	addUser.Lock()
	u, err := env.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	addUser.Unlock()
	g.Expect(err).NotTo(HaveOccurred())
	kc, err := u.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfigs.addKubeconfig(t, kc)
	return kc
}

// addKubeconfig records what of a kubeconfig must never show: its credentials
// as they stand in the file, and a line of the decoded key.
func (l *secretLedger) addKubeconfig(t testing.TB, kc []byte) {
	cfg, err := clientcmd.Load(kc)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	var parts []string
	for _, u := range cfg.AuthInfos {
		parts = append(parts, base64.StdEncoding.EncodeToString(u.ClientKeyData), base64.StdEncoding.EncodeToString(u.ClientCertificateData))
		if lines := strings.Split(string(u.ClientKeyData), "\n"); len(lines) > 2 {
			parts = append(parts, lines[1])
		}
		if u.Token != "" {
			parts = append(parts, u.Token)
		}
	}
	l.add(nil, parts...)
}

// putKubeconfig writes the kubeconfig Secret of a runtime into namespace ns.
func putKubeconfig(t testing.TB, ns, runtimeID string, kc []byte) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + runtimeID, Namespace: ns}, Data: map[string][]byte{"config": kc}}
	NewWithT(t).Expect(k8s.Create(ctx, s)).To(Succeed())
}

// putCredentials writes a credentials Secret with the four keys.
func putCredentials(t testing.TB, ns, name, clientSecret string) map[string][]byte {
	t.Helper()
	data := map[string][]byte{
		"client_id": []byte("client-" + name), "client_secret": []byte(clientSecret),
		"token_url": []byte("https://tenant.example/oauth2/token"), "certs_url": []byte("https://tenant.example/oauth2/certs"),
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}
	NewWithT(t).Expect(k8s.Create(ctx, s)).To(Succeed())
	secrets.add(nil, clientSecret)
	return data
}

// newRuntimeNamespace creates a namespace on a runtime for one test's targets.
func newRuntimeNamespace(t testing.TB, c client.Client, name string) {
	t.Helper()
	NewWithT(t).Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
}

// runtimeSecret is a RuntimeSecret reading credentials from the Secret creds.
func runtimeSecret(ns, name, runtimeID, creds string) *runtimev1alpha1.RuntimeSecret {
	return &runtimev1alpha1.RuntimeSecret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: runtimev1alpha1.RuntimeSecretParameters{
			RuntimeID:            runtimeID,
			CredentialsSecretRef: &xpv2.LocalSecretReference{Name: creds},
			Target:               runtimev1alpha1.TargetSecret{Namespace: ns, Name: "eventing-webhook-auth"},
		}},
	}
}

// runtimeSecretOfApp is runtimeSecret with the IASApplication app in
// applicationRef instead of a credentials Secret.
func runtimeSecretOfApp(ns, name, runtimeID, app string) *runtimev1alpha1.RuntimeSecret {
	rs := runtimeSecret(ns, name, runtimeID, "")
	rs.Spec.ForProvider.CredentialsSecretRef = nil
	rs.Spec.ForProvider.ApplicationRef = &xpv2.NamespacedReference{Name: app}
	return rs
}

// onRuntime reads a Secret from a runtime.
func onRuntime(g Gomega, c client.Client, ns, name string) *corev1.Secret {
	s := &corev1.Secret{}
	g.Expect(c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s)).To(Succeed())
	return s
}

// expectOnRuntime waits until the runtime's Secret holds exactly data, as a
// managed Opaque Secret.
func expectOnRuntime(t testing.TB, c client.Client, ns, name string, data map[string][]byte) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		s := onRuntime(g, c, ns, name)
		g.Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
		g.Expect(s.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "provider-eventing-auth"))
		g.Expect(s.Data).To(Equal(data))
	}, timeout, 200*time.Millisecond).Should(Succeed())
}

// expectWaiting waits until the resource's Ready condition says what it waits for.
func expectWaiting(t *testing.T, a managedObject, what string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		get(g, a)
		c := a.GetCondition(xpv2.TypeReady)
		g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(string(c.Reason)).To(Equal("Waiting"))
		g.Expect(c.Message).To(Equal("Waiting for " + what))
		g.Expect(a.GetCondition(xpv2.TypeSynced).Status).To(Equal(corev1.ConditionTrue), "waiting is no error")
	}, timeout, 200*time.Millisecond).Should(Succeed())
}

// expectGone waits until an object is gone from the cluster c serves.
func expectGone(t *testing.T, c client.Client, o client.Object) {
	t.Helper()
	NewWithT(t).Eventually(func() bool {
		return kerrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(o), o))
	}, timeout, 200*time.Millisecond).Should(BeTrue())
}

// readyRuntimeSecret makes a namespace with a credentials Secret, a kubeconfig for
// the runtime env (reached with c) and a RuntimeSecret, and waits until the
// Secret is on the runtime.
func readyRuntimeSecret(t *testing.T, env *envtest.Environment, c client.Client, id string) (string, *runtimev1alpha1.RuntimeSecret, map[string][]byte) {
	t.Helper()
	ns := newNamespace(t)
	newRuntimeNamespace(t, c, ns)
	data := putCredentials(t, ns, "creds", id+"-client-secret-value")
	putKubeconfig(t, ns, id, newKubeconfig(t, env, id))
	rs := runtimeSecret(ns, id, id, "creds")
	NewWithT(t).Expect(k8s.Create(ctx, rs)).To(Succeed())
	waitReady(t, rs)
	expectOnRuntime(t, c, ns, "eventing-webhook-auth", data)
	return ns, rs, data
}
