package ias

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/lru"
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

// ClientCerts parses client certificates, each input once: it holds the
// certificates parsed last, by the digest of what they were parsed from. The
// credentials Secret is read on every reconcile of every resource that uses
// it, and opening a PKCS#12 bundle derives its key from the password each
// time, where hashing the input to find it again costs a small part of that
// (make bench: BenchmarkParseClientCert). Each ProviderConfig has one
// certificate, two around a renewal, so a small LRU holds them all.
type ClientCerts struct {
	parsed *lru.Cache
}

// NewClientCerts holds the last size certificates parsed.
func NewClientCerts(size int) *ClientCerts {
	return &ClientCerts{parsed: lru.New(size)}
}

// PEM reads a PEM certificate (chain) and its PEM key, as a kubernetes.io/tls
// Secret holds them. Errors never quote the input.
func (cc *ClientCerts) PEM(certPEM, keyPEM []byte) (*ClientCert, error) {
	return cc.parseOnce(func() (tls.Certificate, error) {
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return c, ErrPEMPair
		}
		return c, nil
	}, []byte("pem"), certPEM, keyPEM)
}

// PKCS12 reads a PKCS#12 bundle (as IAS hands out for a system administrator)
// with its password. Errors never quote the input.
func (cc *ClientCerts) PKCS12(bundle []byte, password string) (*ClientCert, error) {
	return cc.parseOnce(func() (tls.Certificate, error) {
		key, leaf, chain, err := decodePKCS12(bundle, password)
		if err != nil {
			return tls.Certificate{}, err
		}
		c := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
		for _, ca := range chain {
			c.Certificate = append(c.Certificate, ca.Raw)
		}
		return c, nil
	}, []byte("pkcs12"), bundle, []byte(password))
}

// decodePKCS12 opens a bundle. Under GODEBUG=fips140=only a bundle protected
// with algorithms outside FIPS 140-3 (the legacy SHA-1, 3DES and RC2) makes
// the decoder panic: that is an error here, and the provider keeps running.
func decodePKCS12(bundle []byte, password string) (key any, leaf *x509.Certificate, chain []*x509.Certificate, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = ErrPKCS12Legacy
		}
	}()
	key, leaf, chain, err = pkcs12.DecodeChain(bundle, password)
	if err != nil {
		return nil, nil, nil, ErrPKCS12Unopened
	}
	return key, leaf, chain, nil
}

// parseOnce parses with parse, unless the same input (raw) was parsed before.
// A ClientCert is never changed once made, so one serves every caller.
func (cc *ClientCerts) parseOnce(parse func() (tls.Certificate, error), raw ...[]byte) (*ClientCert, error) {
	h := sha256.New()
	for _, r := range raw {
		h.Write(r)
		h.Write([]byte{0})
	}
	digest := hex.EncodeToString(h.Sum(nil))
	if c, ok := cc.parsed.Get(digest); ok {
		return c.(*ClientCert), nil //nolint:forcetypeassert // Only *ClientCert is added.
	}
	c, err := parse()
	if err != nil {
		return nil, err
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, errors.New("the certificate cannot be parsed")
		}
	}
	parsed := &ClientCert{Certificate: c, Subject: c.Leaf.Subject.String(), NotAfter: c.Leaf.NotAfter, digest: digest}
	cc.parsed.Add(digest, parsed)
	return parsed, nil
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
