package ias

import (
	"net"
	"net/url"
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
// written: lower case, no trailing dot, no default port. The tenant's rate
// budget, listings and failed logons are kept by this name, so that
// https://HOST:443/ shares them with https://host.
func canonicalHost(u *url.URL) string {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		return net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}
