package ias

import (
	"fmt"
	"net/url"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/loopback"
)

// ValidateURL checks a tenant URL: https, or http to a loopback host only; no
// user info, path, query or fragment. It returns the URL without a trailing slash.
// Its errors do not repeat the value, which may hold a mistyped credential.
func ValidateURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("not a valid URL: it must look like https://<tenant>.accounts.ondemand.com")
	}
	if u.User != nil {
		return "", fmt.Errorf("the URL must not carry credentials; put them under username and password")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("the URL must be the tenant's base URL, without path, query or fragment")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopback.Host(u.Hostname()) {
			return "", fmt.Errorf("http is allowed only to a loopback host; %s needs https", u.Hostname())
		}
	default:
		return "", fmt.Errorf("scheme %q is not supported; use https", u.Scheme)
	}
	return u.Scheme + "://" + u.Host, nil
}
