package ias

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// ClientCert is an X.509 client certificate and its key: a "System as
// Administrator" of IAS logs in to IAS's REST APIs with it over mutual TLS,
// instead of a technical user's password.
type ClientCert struct {
	Certificate tls.Certificate
	// Subject and NotAfter of the leaf certificate, for conditions and events.
	Subject  string
	NotAfter time.Time
	// digest identifies the certificate and key without revealing the key.
	digest string
}

// ParseClientCertPEM reads a PEM certificate (chain) and its PEM key, as a
// kubernetes.io/tls Secret holds them. Errors never quote the input.
func ParseClientCertPEM(certPEM, keyPEM []byte) (*ClientCert, error) {
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, errors.New("not a PEM certificate with its matching PEM private key")
	}
	return newClientCert(c, certPEM, keyPEM)
}

// ParseClientCertPKCS12 reads a PKCS#12 bundle (as IAS hands out for a system
// administrator) with its password. Errors never quote the input.
func ParseClientCertPKCS12(bundle []byte, password string) (*ClientCert, error) {
	key, leaf, chain, err := pkcs12.DecodeChain(bundle, password)
	if err != nil {
		return nil, errors.New("not a PKCS#12 bundle with a certificate and private key that this password opens")
	}
	c := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
	for _, ca := range chain {
		c.Certificate = append(c.Certificate, ca.Raw)
	}
	return newClientCert(c, bundle, []byte(password))
}

func newClientCert(c tls.Certificate, raw ...[]byte) (*ClientCert, error) {
	leaf := c.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, errors.New("the certificate cannot be parsed")
		}
		c.Leaf = leaf
	}
	h := sha256.New()
	for _, r := range raw {
		h.Write(r)
		h.Write([]byte{0})
	}
	return &ClientCert{Certificate: c, Subject: leaf.Subject.String(), NotAfter: leaf.NotAfter,
		digest: hex.EncodeToString(h.Sum(nil))}, nil
}

// CheckValidity refuses a certificate outside its validity period: IAS would
// reject it, and every refused logon counts against the user.
func (c *ClientCert) CheckValidity(now time.Time) error {
	switch {
	case now.After(c.NotAfter):
		return fmt.Errorf("the client certificate (%s) expired at %s", c.Subject, c.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(c.Certificate.Leaf.NotBefore):
		return fmt.Errorf("the client certificate (%s) is valid only from %s", c.Subject, c.Certificate.Leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}
