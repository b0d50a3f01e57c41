package ias

import (
	"fmt"
	"testing"
	"time"

	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// TestParseClientCertOnce: the same input gives the certificate parsed before;
// another certificate, or the same bundle with a wrong password, does not.
func TestParseClientCertOnce(t *testing.T) {
	now := time.Now()
	ca, err := testcerts.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	one, err := ca.Issue("one", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	two, err := ca.Issue("two", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	p12, err := one.PKCS12("pw")
	if err != nil {
		t.Fatal(err)
	}
	certs := NewClientCerts(64)
	first, err := certs.PKCS12(p12, "pw")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := certs.PKCS12(p12, "pw"); err != nil || again != first {
		t.Errorf("the same bundle parsed again: %p, %v; want the first %p", again, err, first)
	}
	if _, err := certs.PKCS12(p12, "wrong"); err == nil {
		t.Error("a wrong password opened the bundle parsed before")
	}
	pemOne, err := certs.PEM(one.CertPEM, one.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pemTwo, err := certs.PEM(two.CertPEM, two.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if pemOne.Subject != "CN=one" || pemTwo.Subject != "CN=two" || pemOne.digest == pemTwo.digest {
		t.Errorf("two certificates: %q %q, digests equal %v", pemOne.Subject, pemTwo.Subject, pemOne.digest == pemTwo.digest)
	}
	if _, err := certs.PEM(one.CertPEM, two.KeyPEM); err == nil {
		t.Error("a certificate with another's key was accepted")
	}
}

// BenchmarkParseClientCert is what reading a certificate logon costs each
// Connect: opening a PKCS#12 bundle (first) against finding it parsed (again).
func BenchmarkParseClientCert(b *testing.B) {
	now := time.Now()
	ca, err := testcerts.NewCA("bench CA")
	if err != nil {
		b.Fatal(err)
	}
	c, err := ca.Issue("system-admin", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	p12, err := c.PKCS12("pw")
	if err != nil {
		b.Fatal(err)
	}
	certs := NewClientCerts(64)
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			certs.parsed.Clear()
			if _, err := certs.PKCS12(p12, "pw"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("again", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := certs.PKCS12(p12, "pw"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestClientCertsBounded: the parsed certificates kept stay within the bound
// however many are parsed.
func TestClientCertsBounded(t *testing.T) {
	now := time.Now()
	ca, err := testcerts.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	certs := NewClientCerts(4)
	for i := range 10 {
		c, err := ca.Issue(fmt.Sprintf("c%d", i), now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := certs.PEM(c.CertPEM, c.KeyPEM); err != nil {
			t.Fatal(err)
		}
	}
	if n := certs.parsed.Len(); n != 4 {
		t.Errorf("after 10 certificates, %d are kept, want the bound 4", n)
	}
}
