package tenantconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

func TestLogon(t *testing.T) {
	now := time.Now()
	ca, err := testcerts.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	valid, err := ca.Issue("system-admin", now.Add(-time.Hour), now.Add(90*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	expired, err := ca.Issue("system-admin", now.Add(-48*time.Hour), now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	other, err := ca.Issue("other", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	p12, err := valid.PKCS12("p12-s3cr3t")
	if err != nil {
		t.Fatal(err)
	}
	const secret = "credentials Secret ns/creds of ProviderConfig ns/ias"
	cases := map[string]struct {
		data map[string]string
		// want: "password", "certificate" or an error text.
		want string
	}{
		"password":                   {data: map[string]string{"username": "admin", "password": "pw-s3cr3t"}, want: "password"},
		"PEM certificate":            {data: map[string]string{"tls.crt": string(valid.CertPEM), "tls.key": string(valid.KeyPEM)}, want: "certificate"},
		"PKCS#12 certificate":        {data: map[string]string{"pkcs12": string(p12), "pkcs12Password": "p12-s3cr3t"}, want: "certificate"},
		"both":                       {data: map[string]string{"username": "admin", "password": "pw-s3cr3t", "tls.crt": string(valid.CertPEM), "tls.key": string(valid.KeyPEM)}, want: "holds both a password (keys username, password) and a client certificate (keys tls.crt, tls.key)"},
		"neither":                    {data: map[string]string{}, want: "holds no credentials"},
		"two certificates":           {data: map[string]string{"tls.crt": string(valid.CertPEM), "tls.key": string(valid.KeyPEM), "pkcs12": string(p12)}, want: "holds two client certificates"},
		"password without user":      {data: map[string]string{"password": "pw-s3cr3t"}, want: `has no key "username"`},
		"certificate without key":    {data: map[string]string{"tls.crt": string(valid.CertPEM)}, want: `has no key "tls.key"`},
		"key of another certificate": {data: map[string]string{"tls.crt": string(valid.CertPEM), "tls.key": string(other.KeyPEM)}, want: "keys tls.crt and tls.key of " + secret + ": not a PEM certificate with its matching PEM private key"},
		"wrong PKCS#12 password":     {data: map[string]string{"pkcs12": string(p12), "pkcs12Password": "wrong-s3cr3t"}, want: "keys pkcs12 and pkcs12Password of " + secret},
		"expired certificate":        {data: map[string]string{"tls.crt": string(expired.CertPEM), "tls.key": string(expired.KeyPEM)}, want: "expired at"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			data := map[string][]byte{}
			for k, v := range tc.data {
				data[k] = []byte(v)
			}
			var tn ias.Tenant
			err := Resolver{Certs: ias.NewClientCerts(8)}.logon(&tn, data, secret, now)
			switch tc.want {
			case "password":
				if err != nil || tn.Username != "admin" || tn.ClientCert != nil {
					t.Fatalf("logon: %v, user %q, certificate %v; want a password logon", err, tn.Username, tn.ClientCert != nil)
				}
			case "certificate":
				if err != nil || tn.ClientCert == nil || tn.Username != "" || !tn.ClientCert.NotAfter.Equal(valid.Cert.NotAfter) {
					t.Fatalf("logon: %v, certificate %+v; want the certificate", err, tn.ClientCert)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), secret) {
					t.Fatalf("logon: %v; want an error naming the Secret and %q", err, tc.want)
				}
				for _, v := range []string{"s3cr3t", "PRIVATE KEY", "BEGIN"} {
					if strings.Contains(err.Error(), v) {
						t.Fatalf("the error repeats a credential (%s): %v", v, err)
					}
				}
			}
		})
	}
}
