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
		reason     string
		kubeconfig string
		// shipped: the provider is not started for tests.
		shipped bool
		refusal string // "" = accepted
	}{
		"LoopbackHTTPShipped": {reason: "a shipped provider takes no plain http, so that no kubeconfig reaches its own ports on loopback",
			kubeconfig: strings.Replace(kubeconfig("", token), "https://api.rt.example:443", "http://127.0.0.1:8080", 1), shipped: true,
			refusal: `cluster "rt" uses plain http, which the provider takes only to a loopback host and only when started for tests`},
		"HTTPSShipped":     {reason: "https is taken as ever", kubeconfig: kubeconfig("", token), shipped: true},
		"InlineToken":      {reason: "a token in the kubeconfig is what a runtime's kubeconfig holds", kubeconfig: kubeconfig("", token)},
		"InlineClientCert": {reason: "so is an inline client certificate", kubeconfig: kubeconfig("", "    client-certificate-data: Q0VSVA==\n    client-key-data: S0VZLVNFQ1JFVA==")},
		"LoopbackHTTP":     {reason: "plain http is allowed to loopback in a provider started for tests", kubeconfig: strings.Replace(kubeconfig("", token), "https://api.rt.example:443", "http://127.0.0.1:8080", 1)},
		"ExecPlugin":       {reason: "an exec plugin would run a command the kubeconfig names on the provider's machine", kubeconfig: kubeconfig("", "    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/steal-SECRET}"), refusal: `user "rt" uses an exec plugin`},
		"AuthProvider":     {reason: "an auth-provider would call out with credentials of its own", kubeconfig: kubeconfig("", "    auth-provider: {name: oidc, config: {client-secret: SECRET}}"), refusal: `user "rt" uses the auth-provider "oidc"`},
		"TokenFile":        {reason: "a file named by a kubeconfig would read the provider's own files", kubeconfig: kubeconfig("", "    tokenFile: /var/run/SECRET/token"), refusal: `user "rt" names a token file`},
		"ClientCertFile":   {reason: "the same for a client certificate file", kubeconfig: kubeconfig("", "    client-certificate: /etc/SECRET/cert.pem\n    client-key-data: S0VZ"), refusal: `user "rt" names a client-certificate file`},
		"ClientKeyFile":    {reason: "and a client key file", kubeconfig: kubeconfig("", "    client-certificate-data: Q0VSVA==\n    client-key: /etc/SECRET/key.pem"), refusal: `user "rt" names a client-key file`},
		"CAFile":           {reason: "and a certificate-authority file", kubeconfig: kubeconfig("    certificate-authority: /etc/SECRET/ca.pem", token), refusal: `names a certificate-authority file`},
		"InsecureTLS":      {reason: "skipping TLS verification would send the token to whoever answers", kubeconfig: kubeconfig("    insecure-skip-tls-verify: true", token), refusal: "sets insecure-skip-tls-verify"},
		"RemoteHTTP":       {reason: "plain http to a remote host would send the token in the clear", kubeconfig: strings.Replace(kubeconfig("", token), "https://", "http://", 1), refusal: "plain http to a remote host"},
		"MalformedYAML":    {reason: "a kubeconfig that does not parse is refused without repeating its content", kubeconfig: "apiVersion: v1\nclusters: [SECRET\n  - : :", refusal: "not a valid kubeconfig: it does not parse as YAML or JSON (line"},
		"NoCurrentContext": {reason: "without a current context there is no server to talk to", kubeconfig: strings.Replace(kubeconfig("", token), "current-context: rt", "", 1), refusal: "no current-context"},
		"UnknownContext":   {reason: "so with one that is not defined", kubeconfig: strings.Replace(kubeconfig("", token), "current-context: rt", "current-context: other", 1), refusal: `current-context "other" is not defined`},
		"NoServer":         {reason: "or a cluster without a server", kubeconfig: strings.Replace(kubeconfig("", token), "server: https://api.rt.example:443", "server: ''", 1), refusal: `cluster "rt" has no server`},
		"UserNotDefined":   {reason: "or a user that is not defined", kubeconfig: strings.Replace(kubeconfig("", token), "user: rt}", "user: nobody}", 1), refusal: `user "nobody" of context "rt" is not defined`},
		"OtherUserHasExec": {reason: "only the current context's user is checked: another's exec plugin is never run", kubeconfig: kubeconfig("", token) + "- name: other\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: x}\n"},
		"EmptyDocument":    {reason: "an empty kubeconfig has no current context", kubeconfig: "", refusal: "no current-context"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rc, err := RESTConfig([]byte(tc.kubeconfig), !tc.shipped)
			if tc.refusal == "" {
				if err != nil {
					t.Fatalf("%s\nrefused: %v", tc.reason, err)
				}
				if rc.Host == "" || rc.ExecProvider != nil || rc.AuthProvider != nil {
					t.Fatalf("%s\nunexpected config: host %q", tc.reason, rc.Host)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s\naccepted, want refusal %q", tc.reason, tc.refusal)
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("%s\nerror does not wrap ErrRefused: %v", tc.reason, err)
			}
			if !strings.Contains(err.Error(), tc.refusal) {
				t.Errorf("%s\nerror %q does not say %q", tc.reason, err, tc.refusal)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("%s\nerror quotes the kubeconfig: %q", tc.reason, err)
			}
		})
	}
}
