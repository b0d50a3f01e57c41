package ias

import (
	"strings"
	"testing"
)

func TestValidateURL(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    string
		wantErr string
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
		"http remote":          {in: "http://tenant.accounts.ondemand.com", wantErr: "http is allowed only to a loopback host"},
		"http private address": {in: "http://10.0.0.1", wantErr: "http is allowed only to a loopback host"},
		"no scheme":            {in: "tenant.accounts.ondemand.com", wantErr: "not a valid URL"},
		"broken scheme":        {in: "https//tenant", wantErr: "not a valid URL"},
		"ftp":                  {in: "ftp://tenant", wantErr: `scheme "ftp" is not supported`},
		"user info":            {in: "https://admin:hunter2@tenant", wantErr: "must not carry credentials"},
		"path":                 {in: "https://tenant/Applications/v1", wantErr: "without path"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ValidateURL(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ValidateURL(%q) error = %v, want it to contain %q", tc.in, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("error repeats the password: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ValidateURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}
