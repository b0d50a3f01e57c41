package kymaruntime

import (
	"errors"
	"strings"
	"testing"
)

// kubeconfig returns a kubeconfig whose cluster and user carry the extra lines.
func kubeconfig(cluster, user string) string {
	return `apiVersion: v1
kind: Config
current-context: rt
contexts:
- name: rt
  context: {cluster: rt, user: rt}
clusters:
- name: rt
  cluster:
    server: https://api.rt.example:443
    certificate-authority-data: Q0EtREFUQS1TRUNSRVQ=
` + cluster + `
users:
- name: rt
  user:
` + user + "\n"
}

func TestRESTConfig(t *testing.T) {
	const token = "    token: tok-SECRET-123"
	cases := map[string]struct {
		kubeconfig string
		refusal    string // "" = accepted
	}{
		"InlineToken":      {kubeconfig: kubeconfig("", token)},
		"InlineClientCert": {kubeconfig: kubeconfig("", "    client-certificate-data: Q0VSVA==\n    client-key-data: S0VZLVNFQ1JFVA==")},
		"LoopbackHTTP":     {kubeconfig: strings.Replace(kubeconfig("", token), "https://api.rt.example:443", "http://127.0.0.1:8080", 1)},
		"ExecPlugin":       {kubeconfig: kubeconfig("", "    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/steal-SECRET}"), refusal: `user "rt" uses an exec plugin`},
		"AuthProvider":     {kubeconfig: kubeconfig("", "    auth-provider: {name: oidc, config: {client-secret: SECRET}}"), refusal: `user "rt" uses the auth-provider "oidc"`},
		"TokenFile":        {kubeconfig: kubeconfig("", "    tokenFile: /var/run/SECRET/token"), refusal: `user "rt" names a token file`},
		"ClientCertFile":   {kubeconfig: kubeconfig("", "    client-certificate: /etc/SECRET/cert.pem\n    client-key-data: S0VZ"), refusal: `user "rt" names a client-certificate file`},
		"ClientKeyFile":    {kubeconfig: kubeconfig("", "    client-certificate-data: Q0VSVA==\n    client-key: /etc/SECRET/key.pem"), refusal: `user "rt" names a client-key file`},
		"CAFile":           {kubeconfig: kubeconfig("    certificate-authority: /etc/SECRET/ca.pem", token), refusal: `names a certificate-authority file`},
		"InsecureTLS":      {kubeconfig: kubeconfig("    insecure-skip-tls-verify: true", token), refusal: "sets insecure-skip-tls-verify"},
		"RemoteHTTP":       {kubeconfig: strings.Replace(kubeconfig("", token), "https://", "http://", 1), refusal: "plain http to a remote host"},
		"MalformedYAML":    {kubeconfig: "apiVersion: v1\nclusters: [SECRET\n  - : :", refusal: "not a valid kubeconfig: it does not parse as YAML or JSON (line"},
		"NoCurrentContext": {kubeconfig: strings.Replace(kubeconfig("", token), "current-context: rt", "", 1), refusal: "no current-context"},
		"UnknownContext":   {kubeconfig: strings.Replace(kubeconfig("", token), "current-context: rt", "current-context: other", 1), refusal: `current-context "other" is not defined`},
		"NoServer":         {kubeconfig: strings.Replace(kubeconfig("", token), "server: https://api.rt.example:443", "server: ''", 1), refusal: `cluster "rt" has no server`},
		"UserNotDefined":   {kubeconfig: strings.Replace(kubeconfig("", token), "user: rt}", "user: nobody}", 1), refusal: `user "nobody" of context "rt" is not defined`},
		"OtherUserHasExec": {kubeconfig: kubeconfig("", token) + "- name: other\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: x}\n"},
		"EmptyDocument":    {kubeconfig: "", refusal: "no current-context"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rc, err := RESTConfig([]byte(tc.kubeconfig))
			if tc.refusal == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if rc.Host == "" || rc.ExecProvider != nil || rc.AuthProvider != nil {
					t.Fatalf("unexpected config: host %q", rc.Host)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want refusal %q", tc.refusal)
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("error does not wrap ErrRefused: %v", err)
			}
			if !strings.Contains(err.Error(), tc.refusal) {
				t.Errorf("error %q does not say %q", err, tc.refusal)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error quotes the kubeconfig: %q", err)
			}
		})
	}
}
