// Package kymaruntime connects to Kyma runtimes with kubeconfigs taken from Secrets.
// Kubeconfigs are untrusted input: only inline credentials are accepted.
package kymaruntime

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/loopback"
)

// ErrRefused marks kubeconfigs the provider does not use.
var ErrRefused = errors.New("kubeconfig refused")

func refused(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefused}, a...)...)
}

// yamlLine finds the position in a parse error without repeating any content.
var yamlLine = regexp.MustCompile(`line \d+`)

// RESTConfig parses a kubeconfig and returns the config of its current context.
// It refuses exec and auth-provider plugins, any file path (token, certificate,
// key or CA file), disabled TLS verification and plain HTTP, but to a loopback
// host where plainHTTPLoopback allows it (a provider started for tests).
// Errors never quote the kubeconfig.
func RESTConfig(data []byte, plainHTTPLoopback bool) (*rest.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		where := yamlLine.FindString(err.Error())
		if where != "" {
			where = " (" + where + ")"
		}
		return nil, refused("not a valid kubeconfig: it does not parse as YAML or JSON%s", where)
	}
	if cfg.CurrentContext == "" {
		return nil, refused("no current-context is set")
	}
	kctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || kctx == nil {
		return nil, refused("current-context %q is not defined", cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok || cluster == nil {
		return nil, refused("cluster %q of context %q is not defined", kctx.Cluster, cfg.CurrentContext)
	}
	user, ok := cfg.AuthInfos[kctx.AuthInfo]
	if !ok || user == nil {
		// A context without a user would fall back to anonymous access.
		return nil, refused("user %q of context %q is not defined", kctx.AuthInfo, cfg.CurrentContext)
	}
	if err := checkCluster(kctx.Cluster, cluster, plainHTTPLoopback); err != nil {
		return nil, err
	}
	if err := checkUser(kctx.AuthInfo, user); err != nil {
		return nil, err
	}
	// Only the entries in use go to clientcmd, so nothing else is ever read.
	only := clientcmdapi.NewConfig()
	only.Clusters["c"], only.AuthInfos["u"] = cluster, user
	only.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: kctx.Namespace}
	only.CurrentContext = "x"
	rc, err := clientcmd.NewNonInteractiveClientConfig(*only, "x", &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, refused("context %q is not usable", cfg.CurrentContext)
	}
	return rc, nil
}

func checkCluster(name string, c *clientcmdapi.Cluster, plainHTTPLoopback bool) error {
	switch {
	case c.Server == "":
		return refused("cluster %q has no server", name)
	case c.CertificateAuthority != "":
		return refused("cluster %q names a certificate-authority file; only certificate-authority-data is accepted", name)
	case c.InsecureSkipTLSVerify:
		return refused("cluster %q sets insecure-skip-tls-verify; the runtime's certificate must be verified", name)
	}
	u, err := url.Parse(c.Server)
	if err != nil || u.Host == "" {
		return refused("cluster %q has no valid server URL", name)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopback.Host(u.Hostname()) {
			return refused("cluster %q uses plain http to a remote host; use https", name)
		}
		if !plainHTTPLoopback {
			return refused("cluster %q uses plain http, which the provider takes only to a loopback host and only when started for tests (--test-plain-http-loopback); use https", name)
		}
	default:
		return refused("cluster %q has a server URL with scheme %q; use https", name, u.Scheme)
	}
	return nil
}

func checkUser(name string, u *clientcmdapi.AuthInfo) error {
	switch {
	case u.Exec != nil:
		return refused("user %q uses an exec plugin; only inline credentials (token, client certificate data) are accepted", name)
	case u.AuthProvider != nil:
		return refused("user %q uses the auth-provider %q; only inline credentials (token, client certificate data) are accepted", name, u.AuthProvider.Name)
	case u.TokenFile != "":
		return refused("user %q names a token file; only an inline token is accepted", name)
	case u.ClientCertificate != "":
		return refused("user %q names a client-certificate file; only client-certificate-data is accepted", name)
	case u.ClientKey != "":
		return refused("user %q names a client-key file; only client-key-data is accepted", name)
	}
	return nil
}
