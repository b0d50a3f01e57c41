package tenantconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/google/go-cmp/cmp"

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
	expiredCert, err := ias.NewClientCerts(1).PEM(expired.CertPEM, expired.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		data   map[string]string
		// logon is "password" or "certificate" when the logon is read.
		logon string
		err   error
	}{
		"password": {reason: "a username and password are a password logon",
			data: map[string]string{"username": "admin", "password": "pw-s3cr3t"}, logon: "password"},
		"PEM certificate": {reason: "tls.crt and tls.key are a certificate logon",
			data: map[string]string{"tls.crt": string(valid.CertPEM), "tls.key": string(valid.KeyPEM)}, logon: "certificate"},
		"PKCS#12 certificate": {reason: "a PKCS#12 bundle with its password is a certificate logon",
			data: map[string]string{"pkcs12": string(p12), "pkcs12Password": "p12-s3cr3t"}, logon: "certificate"},
		"both": {reason: "a password and a certificate leave it unclear which to use",
			data: map[string]string{"username": "admin", "password": "pw-s3cr3t", "tls.crt": string(valid.CertPEM), "tls.key": string(valid.KeyPEM)},
			err:  errors.Errorf(errBothLogons, secret, "tls.crt, tls.key")},
		"neither": {reason: "a Secret without credentials is refused",
			data: map[string]string{}, err: errors.Errorf(errNoLogon, secret)},
		"two certificates": {reason: "a PEM certificate and a PKCS#12 bundle leave it unclear which to use",
			data: map[string]string{"tls.crt": string(valid.CertPEM), "tls.key": string(valid.KeyPEM), "pkcs12": string(p12)},
			err:  errors.Errorf(errTwoCertificates, secret)},
		"password without user": {reason: "a password logon needs both keys",
			data: map[string]string{"password": "pw-s3cr3t"}, err: errors.Errorf(errNoPasswordKey, secret, KeyUsername)},
		"certificate without key": {reason: "a PEM logon needs both keys",
			data: map[string]string{"tls.crt": string(valid.CertPEM)}, err: errors.Errorf(errNoPEMKey, secret, KeyTLSKey)},
		"key of another certificate": {reason: "a key must match its certificate",
			data: map[string]string{"tls.crt": string(valid.CertPEM), "tls.key": string(other.KeyPEM)},
			err:  errors.Wrapf(ias.ErrPEMPair, errPEM, secret)},
		"wrong PKCS#12 password": {reason: "a bundle its password does not open is refused",
			data: map[string]string{"pkcs12": string(p12), "pkcs12Password": "wrong-s3cr3t"},
			err:  errors.Wrapf(ias.ErrPKCS12Unopened, errPKCS12, secret)},
		"expired certificate": {reason: "an expired certificate is refused before any call",
			data: map[string]string{"tls.crt": string(expired.CertPEM), "tls.key": string(expired.KeyPEM)},
			err:  errors.Errorf(errCertificateInvalid, secret, expiredCert.CheckValidity(now).Error())},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			data := map[string][]byte{}
			for k, v := range tc.data {
				data[k] = []byte(v)
			}
			var tn ias.Tenant
			err := Resolver{Certs: ias.NewClientCerts(8)}.logon(&tn, data, secret, now)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s: logon error -want +got:\n%s", tc.reason, diff)
			}
			switch tc.logon {
			case "password":
				if tn.Username != "admin" || tn.ClientCert != nil {
					t.Errorf("%s: user %q, certificate %v; want a password logon", tc.reason, tn.Username, tn.ClientCert != nil)
				}
			case "certificate":
				if tn.ClientCert == nil || tn.Username != "" || !tn.ClientCert.NotAfter.Equal(valid.Cert.NotAfter) {
					t.Errorf("%s: certificate %+v; want the certificate", tc.reason, tn.ClientCert)
				}
			}
			for _, v := range []string{"s3cr3t", "PRIVATE KEY", "BEGIN"} {
				if err != nil && strings.Contains(err.Error(), v) {
					t.Errorf("%s: the error repeats a credential (%s): %v", tc.reason, v, err)
				}
			}
		})
	}
}
