//go:build e2e

package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// runtimeProxy lets one API server stand in for many Kyma runtimes: runtime
// <id> is served under /rt/<id>/, and its kyma-system namespace is the API
// server's namespace <id>. Each runtime's Secret kyma-system/eventing-webhook-auth
// so is a Secret of its own, reached through a kubeconfig of its own.
type runtimeProxy struct {
	srv    *httptest.Server
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
	p := &runtimeProxy{target: target, rt: rt}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(p.serve))
	return p, nil
}

func (p *runtimeProxy) Close() { p.srv.Close() }

// kubeconfig is runtime id's kubeconfig.
func (p *runtimeProxy) kubeconfig(id string) []byte {
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw}))
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
	body, _ := io.ReadAll(r.Body)
	u := *p.target
	u.Path, u.RawQuery = path, r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader([]byte(toServer.Replace(string(body)))))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for _, h := range []string{"Accept", "Content-Type", "User-Agent"} {
		out.Header.Set(h, r.Header.Get(h))
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
