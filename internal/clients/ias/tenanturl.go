package ias

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/loopback"
)

// ValidateURL checks a tenant URL: https, or, where plainHTTPLoopback allows
// it (a provider started for tests), http to a loopback host; no user info,
// path, query or fragment. A shipped provider takes no plain http at all, so
// that no tenant's input reaches the provider's own ports on loopback. It
// returns the URL in canonical form (canonicalHost), without a trailing slash.
// Its errors do not repeat the value, which may hold a mistyped credential.
func ValidateURL(raw string, plainHTTPLoopback bool) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", errors.New(errURLInvalid)
	}
	if _, err := portNumber(u.Port()); err != nil {
		return "", errors.New(errURLInvalid)
	}
	if u.User != nil {
		return "", errors.New(errURLCredentials)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New(errURLNotBase)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopback.Host(strings.ToLower(u.Hostname())) {
			return "", errors.Errorf(errURLRemoteHTTP, u.Hostname())
		}
		if !plainHTTPLoopback {
			return "", ErrURLPlainHTTP
		}
	default:
		return "", errors.Errorf(errURLScheme, u.Scheme)
	}
	return u.Scheme + "://" + canonicalHost(u), nil
}

// canonicalHost is the URL's host as one tenant is named however its URL is
// written: lower case, no trailing dot, the port as a number (0443 is 443)
// and no default port. Connections are kept by this name, so that
// https://HOST:0443/ shares them with https://host.
func canonicalHost(u *url.URL) string {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port, _ := portNumber(u.Port())
	if (u.Scheme == "https" && port == 443) || (u.Scheme == "http" && port == 80) {
		port = 0
	}
	if port != 0 {
		return net.JoinHostPort(host, strconv.Itoa(port))
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// portNumber reads a URL's port, leading zeros and all; 0 for none.
func portNumber(p string) (int, error) {
	if p == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || n > 65535 {
		return 0, errors.New(errURLInvalid)
	}
	return n, nil
}

// tenantDomains are the host names under which SAP serves every IAS tenant
// <tenant>.<domain>: each line is one family, its first name the one a tenant
// is known by here. SAP Cloud Identity Services documents both host names of
// a tenant ("Tenant Model and Licensing": accounts.ondemand.com and
// accounts.cloud.sap; accounts400 for test tenants).
var tenantDomains = [][]string{
	{".accounts.ondemand.com", ".accounts.cloud.sap"},
	{".accounts400.ondemand.com", ".accounts400.cloud.sap"},
}

// TenantID names the IAS tenant a validated URL (ValidateURL) reaches,
// whichever of its host names the URL uses: the tenant's technical users,
// failed logons and request budget belong to the tenant, not to a spelling of
// its URL. A host under no known domain (a custom domain, the simulator) is a
// tenant of its own.
func TenantID(canonicalURL string) string {
	u, err := url.Parse(canonicalURL)
	if err != nil {
		return canonicalURL
	}
	host := u.Hostname()
	for _, family := range tenantDomains {
		for _, d := range family[1:] {
			if sub, ok := strings.CutSuffix(host, d); ok && sub != "" {
				host = sub + family[0]
			}
		}
	}
	switch {
	case u.Port() != "":
		host = net.JoinHostPort(host, u.Port())
	case strings.Contains(host, ":"):
		host = "[" + host + "]"
	}
	return u.Scheme + "://" + host
}
