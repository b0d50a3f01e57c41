package ias

import (
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/google/go-cmp/cmp"
)

func TestValidateURL(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		// shipped: the provider is not started for tests.
		shipped bool
		want    string
		err     error
	}{
		"http loopback shipped":  {reason: "a shipped provider takes no plain http, so that no tenant's URL reaches its own ports", in: "http://127.0.0.1:8080", shipped: true, err: ErrURLPlainHTTP},
		"http localhost shipped": {reason: "nor to localhost", in: "http://localhost:8081", shipped: true, err: ErrURLPlainHTTP},
		"https shipped":          {reason: "https is taken as ever", in: "https://tenant.accounts.ondemand.com", shipped: true, want: "https://tenant.accounts.ondemand.com"},
		"http remote shipped":    {reason: "plain http to a remote host says so", in: "http://tenant.accounts.ondemand.com", shipped: true, err: errors.Errorf(errURLRemoteHTTP, "tenant.accounts.ondemand.com")},
		"https tenant":           {reason: "a tenant's base URL is taken as it is", in: "https://tenant.accounts.ondemand.com", want: "https://tenant.accounts.ondemand.com"},
		"trailing slash":         {reason: "one URL is one tenant: a trailing slash is dropped, so that two spellings share one client and one breaker", in: "https://tenant.accounts.ondemand.com/", want: "https://tenant.accounts.ondemand.com"},
		"http loopback ip":       {reason: "plain http is allowed to loopback in a provider started for tests, for the simulator", in: "http://127.0.0.1:8089", want: "http://127.0.0.1:8089"},
		"http localhost":         {reason: "localhost is loopback", in: "http://localhost:8089", want: "http://localhost:8089"},
		"http ipv6 loopback":     {reason: "so is ::1", in: "http://[::1]:8089", want: "http://[::1]:8089"},
		"default port":           {reason: "the default port is dropped", in: "https://tenant.accounts.ondemand.com:443/", want: "https://tenant.accounts.ondemand.com"},
		"upper case":             {reason: "scheme and host are lower-cased", in: "HTTPS://Tenant.Accounts.OnDemand.COM", want: "https://tenant.accounts.ondemand.com"},
		"trailing dot":           {reason: "a fully qualified host's trailing dot is dropped", in: "https://tenant.accounts.ondemand.com./", want: "https://tenant.accounts.ondemand.com"},
		"all at once":            {reason: "the rules combine", in: "HTTPS://TENANT.accounts.ondemand.com.:443/", want: "https://tenant.accounts.ondemand.com"},
		"port zeros":             {reason: "a port with leading zeros is the default port", in: "https://tenant.accounts.ondemand.com:0443", want: "https://tenant.accounts.ondemand.com"},
		"other port zeros":       {reason: "and another port is read as its number", in: "https://tenant.accounts.ondemand.com:08443", want: "https://tenant.accounts.ondemand.com:8443"},
		"port out of range":      {reason: "a port beyond 65535 names no server", in: "https://tenant:65536", err: errors.New(errURLInvalid)},
		"other port kept":        {reason: "another port is part of the tenant", in: "https://tenant.accounts.ondemand.com:8443", want: "https://tenant.accounts.ondemand.com:8443"},
		"http default port":      {reason: "http's default port is dropped as well", in: "http://LOCALHOST:80", want: "http://localhost"},
		"http remote":            {reason: "plain http to a remote host would send the credentials in the clear", in: "http://tenant.accounts.ondemand.com", err: errors.Errorf(errURLRemoteHTTP, "tenant.accounts.ondemand.com")},
		"http private address":   {reason: "a private address is remote too", in: "http://10.0.0.1", err: errors.Errorf(errURLRemoteHTTP, "10.0.0.1")},
		"no scheme":              {reason: "a URL without scheme is not one", in: "tenant.accounts.ondemand.com", err: errors.New(errURLInvalid)},
		"broken scheme":          {reason: "nor one with a broken scheme", in: "https//tenant", err: errors.New(errURLInvalid)},
		"ftp":                    {reason: "only https is spoken", in: "ftp://tenant", err: errors.Errorf(errURLScheme, "ftp")},
		"user info":              {reason: "credentials belong in the Secret; the error never repeats them", in: "https://admin:hunter2@tenant", err: errors.New(errURLCredentials)},
		"path":                   {reason: "the client adds the API's paths to the base URL", in: "https://tenant/Applications/v1", err: errors.New(errURLNotBase)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ValidateURL(tc.in, !tc.shipped)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s\nValidateURL(%q) error -want +got:\n%s", tc.reason, tc.in, diff)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("%s\nerror repeats the password: %v", tc.reason, err)
			}
			if got != tc.want {
				t.Errorf("%s\nValidateURL(%q) = %q, want %q", tc.reason, tc.in, got, tc.want)
			}
		})
	}
}

func TestTenantID(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   string
	}{
		"ondemand":          {reason: "a tenant under its first host name is itself", in: "https://t1.accounts.ondemand.com", want: "https://t1.accounts.ondemand.com"},
		"cloud.sap":         {reason: "the tenant's other host name is the same tenant", in: "https://t1.accounts.cloud.sap", want: "https://t1.accounts.ondemand.com"},
		"test tenant":       {reason: "so for test tenants", in: "https://t1.accounts400.cloud.sap", want: "https://t1.accounts400.ondemand.com"},
		"port kept":         {reason: "another port stays part of it", in: "https://t1.accounts.cloud.sap:8443", want: "https://t1.accounts.ondemand.com:8443"},
		"custom domain":     {reason: "a host under no known domain is a tenant of its own", in: "https://login.example.com", want: "https://login.example.com"},
		"bare domain":       {reason: "the domain alone names no tenant", in: "https://accounts.cloud.sap", want: "https://accounts.cloud.sap"},
		"ipv6 without port": {reason: "an IPv6 host keeps its brackets", in: "http://[::1]", want: "http://[::1]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := TenantID(tc.in); got != tc.want {
				t.Errorf("%s\nTenantID(%q) = %q, want %q", tc.reason, tc.in, got, tc.want)
			}
		})
	}
}
