// Package testcerts makes CAs and certificates for tests of the certificate
// logon to IAS (the simulator trusts a CA, the provider presents a
// certificate it signed, or one it did not, or an expired one), and for the
// local processes of the local stack.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"sync/atomic"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

var serial atomic.Int64

// CA signs client certificates.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate, for the party that trusts it.
	PEM []byte
}

// NewCA makes a CA named name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Client is a client certificate and its key.
type Client struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// CertPEM and KeyPEM as a kubernetes.io/tls Secret holds them.
	CertPEM, KeyPEM []byte
}

// Issue signs a client certificate for common name cn, valid from notBefore
// to notAfter.
func (ca *CA) Issue(cn string, notBefore, notAfter time.Time) (*Client, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	return ca.sign(tmpl, key)
}

// IssueServerOnly signs a certificate for cn with server-auth usage alone, as
// the same CA may issue for a gateway or a webhook: it must name no client.
func (ca *CA) IssueServerOnly(cn string, notBefore, notAfter time.Time) (*Client, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	return ca.sign(tmpl, key)
}

// sign issues tmpl for key.
func (ca *CA) sign(tmpl *x509.Certificate, key *ecdsa.PrivateKey) (*Client, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Client{Cert: cert, key: key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})}, nil
}

// PKCS12 is the certificate and key as a PKCS#12 bundle with password, in the
// modern encryption IAS's downloads use.
func (c *Client) PKCS12(password string) ([]byte, error) {
	return pkcs12.Modern.Encode(c.key, c.Cert, nil, password)
}

// LegacyPKCS12 is the bundle in the legacy encryption (3DES, SHA-1) that
// older tools export and FIPS 140-3 does not allow.
func (c *Client) LegacyPKCS12(password string) ([]byte, error) {
	return pkcs12.LegacyDES.Encode(c.key, c.Cert, nil, password)
}

// IssueServer signs a certificate that serves and presents name, localhost
// and 127.0.0.1 (a local process of a test or of the local stack), valid for
// a day.
func (ca *CA) IssueServer(name string) (*Client, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"localhost", name}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	return ca.sign(tmpl, key)
}
