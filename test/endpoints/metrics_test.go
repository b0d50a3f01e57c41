// Package endpoints checks who may reach the provider process's own HTTP
// endpoints, on the binary with its shipped defaults: metrics only for a
// caller the API server authenticates and authorises, health probes for
// anyone (the kubelet).
package endpoints

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/providerstack"
)

// freeAddr is a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() //nolint:errcheck // Freed for the provider.
	return l.Addr().String()
}

// TestMetricsAuthenticated: /metrics answers 401 to a caller without a token,
// 403 to one the API server does not authorise for GET /metrics, and the
// metrics to one that Prometheus's ClusterRole (as cluster/install.yaml ships
// it) is bound to; /healthz answers anyone.
func TestMetricsAuthenticated(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, which builds kube-apiserver and etcd first")
	}
	g := NewWithT(t)
	ctx := context.Background()
	s, err := providerstack.Start(ctx, t.TempDir(), iassim.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(s.Stop)
	metrics, probes := freeAddr(t), freeAddr(t)
	// The shipped default, --metrics-secure=true, after the stack's own flags.
	_, err = s.Provider("provider", "--kyma-bridge=false", "--metrics-bind-address="+metrics, "--health-probe-bind-address="+probes, "--metrics-secure=true")
	g.Expect(err).NotTo(HaveOccurred())

	const ns = providerstack.Namespace
	token := func(sa string) string {
		g.Expect(s.Mgmt.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}})).To(Succeed())
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(3600))}}
		g.Expect(s.Mgmt.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}}, tr)).To(Succeed())
		return tr.Status.Token
	}
	prometheus, stranger := token("prometheus"), token("stranger")
	g.Expect(s.Mgmt.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "provider-eventing-auth:metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}})).To(Succeed())
	g.Expect(s.Mgmt.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "prometheus-reads-provider-eventing-auth"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "provider-eventing-auth:metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: ns}}})).To(Succeed())

	// The serving certificate is the provider's own, self-signed.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // A self-signed serving certificate.
	get := func(url, bearer string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		g.Expect(err).NotTo(HaveOccurred())
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close() //nolint:errcheck // Read below.
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	g.Eventually(func() int { code, _ := get("http://"+probes+"/healthz", ""); return code }, time.Minute, 200*time.Millisecond).Should(Equal(http.StatusOK))
	url := "https://" + metrics + "/metrics"
	g.Eventually(func() int { code, _ := get(url, prometheus); return code }, time.Minute, 200*time.Millisecond).Should(Equal(http.StatusOK))
	code, body := get(url, prometheus)
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(body).To(ContainSubstring("eventing_auth_"), "the provider's own metrics")
	for name, c := range map[string]struct {
		bearer string
		want   int
	}{
		"no token":                          {"", http.StatusUnauthorized},
		"a token nobody issued":             {"not-a-token", http.StatusUnauthorized},
		"a ServiceAccount without the role": {stranger, http.StatusForbidden},
	} {
		code, body := get(url, c.bearer)
		g.Expect(code).To(Equal(c.want), fmt.Sprintf("%s: %s", name, body))
		g.Expect(strings.Contains(body, "eventing_auth_")).To(BeFalse(), name)
	}
	code, _ = get("http://"+metrics+"/metrics", "")
	g.Expect(code).NotTo(Equal(http.StatusOK), "plain HTTP served the metrics")
}

func ptrTo[T any](v T) *T { return &v }
