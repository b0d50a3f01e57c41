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
		in   string
		want string
		err  error
	}{
		"https tenant":         {in: "https://tenant.accounts.ondemand.com", want: "https://tenant.accounts.ondemand.com"},
		"trailing slash":       {in: "https://tenant.accounts.ondemand.com/", want: "https://tenant.accounts.ondemand.com"},
		"http loopback ip":     {in: "http://127.0.0.1:8089", want: "http://127.0.0.1:8089"},
		"http localhost":       {in: "http://localhost:8089", want: "http://localhost:8089"},
		"http ipv6 loopback":   {in: "http://[::1]:8089", want: "http://[::1]:8089"},
		"default port":         {in: "https://tenant.accounts.ondemand.com:443/", want: "https://tenant.accounts.ondemand.com"},
		"upper case":           {in: "HTTPS://Tenant.Accounts.OnDemand.COM", want: "https://tenant.accounts.ondemand.com"},
		"trailing dot":         {in: "https://tenant.accounts.ondemand.com./", want: "https://tenant.accounts.ondemand.com"},
		"all at once":          {in: "HTTPS://TENANT.accounts.ondemand.com.:443/", want: "https://tenant.accounts.ondemand.com"},
		"other port kept":      {in: "https://tenant.accounts.ondemand.com:8443", want: "https://tenant.accounts.ondemand.com:8443"},
		"http default port":    {in: "http://LOCALHOST:80", want: "http://localhost"},
		"http remote":          {in: "http://tenant.accounts.ondemand.com", err: errors.Errorf(errURLRemoteHTTP, "tenant.accounts.ondemand.com")},
		"http private address": {in: "http://10.0.0.1", err: errors.Errorf(errURLRemoteHTTP, "10.0.0.1")},
		"no scheme":            {in: "tenant.accounts.ondemand.com", err: errors.New(errURLInvalid)},
		"broken scheme":        {in: "https//tenant", err: errors.New(errURLInvalid)},
		"ftp":                  {in: "ftp://tenant", err: errors.Errorf(errURLScheme, "ftp")},
		"user info":            {in: "https://admin:hunter2@tenant", err: errors.New(errURLCredentials)},
		"path":                 {in: "https://tenant/Applications/v1", err: errors.New(errURLNotBase)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ValidateURL(tc.in)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("ValidateURL(%q) error -want +got:\n%s", tc.in, diff)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error repeats the password: %v", err)
			}
			if got != tc.want {
				t.Errorf("ValidateURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
