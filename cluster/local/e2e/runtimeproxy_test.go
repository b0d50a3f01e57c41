//go:build e2e

package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// runtimeProxy lets one API server stand in for many Kyma runtimes: runtime
// <id> is served under /rt/<id>/, and its kyma-system namespace is the API
// server's namespace <id>. Each runtime's Secret kyma-system/eventing-webhook-auth
// so is a Secret of its own, reached through a kubeconfig of its own.
type runtimeProxy struct {
	srv    *httptest.Server
	caPEM  []byte
	target *url.URL
	rt     http.RoundTripper
}

func newRuntimeProxy(kubeconfigPath string) (*runtimeProxy, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return nil, err
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	// An ECDSA certificate, not httptest's RSA one: each runtime's client
	// makes its own TLS handshakes, and the RSA signature of every one cost
	// this process, on the machine measured, what each runtime's own API
	// server pays elsewhere.
	ca, err := testcerts.NewCA("runtime proxy")
	if err != nil {
		return nil, err
	}
	cert, err := ca.IssueServer("runtime-proxy")
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
	if err != nil {
		return nil, err
	}
	p := &runtimeProxy{target: target, rt: rt, caPEM: ca.PEM}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	p.srv.StartTLS()
	return p, nil
}

func (p *runtimeProxy) Close() { p.srv.Close() }

// kubeconfig is runtime id's kubeconfig.
func (p *runtimeProxy) kubeconfig(id string) []byte {
	ca := base64.StdEncoding.EncodeToString(p.caPEM)
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: %[1]s
clusters:
- name: %[1]s
  cluster: {server: "%[2]s/rt/%[1]s", certificate-authority-data: %[3]s}
users:
- name: %[1]s
  user: {token: runtime-%[1]s}
contexts:
- name: %[1]s
  context: {cluster: %[1]s, user: %[1]s}
`, id, p.srv.URL, ca))
}

func (p *runtimeProxy) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/rt/")
	id, path, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		http.NotFound(w, r)
		return
	}
	toServer := strings.NewReplacer("/namespaces/kyma-system/", "/namespaces/"+id+"/", `"namespace":"kyma-system"`, `"namespace":"`+id+`"`)
	toClient := strings.NewReplacer(`"namespace":"`+id+`"`, `"namespace":"kyma-system"`)
	path = strings.TrimSuffix(toServer.Replace("/"+path+"/"), "/")
	body, err := jsonBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	u := *p.target
	u.Path, u.RawQuery = path, r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader([]byte(toServer.Replace(string(body)))))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	// JSON both ways, so that namespaces can be rewritten in the bodies;
	// client-go reads a response by its Content-Type.
	out.Header.Set("Accept", "application/json")
	out.Header.Set("User-Agent", r.Header.Get("User-Agent"))
	if len(body) > 0 {
		out.Header.Set("Content-Type", r.Header.Get("Content-Type"))
		if r.Header.Get("Content-Type") == runtime.ContentTypeProtobuf {
			out.Header.Set("Content-Type", runtime.ContentTypeJSON)
		}
	}
	resp, err := p.rt.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write([]byte(toClient.Replace(string(data))))
}

// jsonBody is a request's body as JSON: client-go's typed clients send
// protobuf, which is re-encoded.
func jsonBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Header.Get("Content-Type") != runtime.ContentTypeProtobuf || len(body) == 0 {
		return body, err
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{}).Encode(obj, &buf)
	return buf.Bytes(), err
}
