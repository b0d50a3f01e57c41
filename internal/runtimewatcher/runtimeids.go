package runtimewatcher

import (
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/kyma-project/runtime-watcher/listener/pkg/v2/certificate"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
)

// errUntrusted is a client certificate that does not chain to a trusted CA
// or is not valid now.
var errUntrusted = errors.New("the client certificate is not one the trusted CA issued for client authentication, or not valid now")

// runtimeIDCacheSize is how many runtimes' certificate headers are
// remembered: those that sent events last, as many as the runtimes whose TLS
// sessions are kept (kymaruntime.DefaultSessionCacheSize). An entry is a
// digest and an ID, about 150 bytes.
const runtimeIDCacheSize = 1000

// runtimeIDs reads the runtime ID, the common name of the client certificate
// the gateway forwards, and remembers it by the header that carried it. A
// runtime sends the same certificate with every event (the echo of each
// write, each repair), and parsing it (URL unescaping, PEM, x509) was most of
// the listener's CPU. Keyed by the header's digest: the same bytes are the
// same certificate, and the key is 32 bytes, not the certificate.
//
// With roots, only a certificate that chains to one of them and is valid now
// names a runtime; only such certificates are remembered, with their validity,
// so that a forged header costs a parse and is never kept.
type runtimeIDs struct {
	cache *lru.Cache
	roots atomic.Pointer[x509.CertPool]
	clock clock.PassiveClock
}

// runtimeID is a remembered certificate's runtime ID and validity.
type runtimeID struct {
	id                  string
	notBefore, notAfter time.Time
}

func newRuntimeIDs(roots *x509.CertPool, c clock.PassiveClock) *runtimeIDs {
	ids := &runtimeIDs{cache: lru.New(runtimeIDCacheSize), clock: c}
	ids.roots.Store(roots)
	return ids
}

// setRoots trusts roots from now on, and forgets every certificate checked
// against the ones before: a CA taken out of the file names no runtime any
// more.
func (c *runtimeIDs) setRoots(roots *x509.CertPool) {
	c.roots.Store(roots)
	c.cache.Clear()
}

// of returns the runtime ID of request r as certificate.GetCertificateFromHeader
// reads it ("" if the common name is empty), or that function's error, or
// errUntrusted.
func (c *runtimeIDs) of(r *http.Request) (string, error) {
	values := r.Header[certificate.XFCCHeader]
	if len(values) == 0 || len(values[0]) > certificate.Limit32KiB {
		// Missing or too long: the module's own error.
		_, err := certificate.GetCertificateFromHeader(r)
		return "", err
	}
	key := sha256.Sum256([]byte(values[0]))
	now := c.clock.Now()
	roots := c.roots.Load()
	if v, ok := c.cache.Get(key); ok {
		known := v.(runtimeID)
		if roots != nil && (now.Before(known.notBefore) || now.After(known.notAfter)) {
			return "", errUntrusted
		}
		return known.id, nil
	}
	cert, err := certificate.GetCertificateFromHeader(r)
	if err != nil {
		return "", err
	}
	if roots != nil {
		// Client-auth usage: a server's certificate of the same CA names no
		// runtime.
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			return "", fmt.Errorf("%w: %s", errUntrusted, verifyCause(err))
		}
	}
	id := cert.Subject.CommonName
	if id != "" {
		c.cache.Add(key, runtimeID{id: id, notBefore: cert.NotBefore, notAfter: cert.NotAfter})
	}
	return id, nil
}

// verifyCause names why a certificate was not verified, without its content.
func verifyCause(err error) string {
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "expired or not yet valid"
	case errors.As(err, new(x509.UnknownAuthorityError)):
		return "signed by an unknown authority"
	case errors.As(err, &invalid) && invalid.Reason == x509.IncompatibleUsage:
		return "without client-auth usage"
	}
	return "not verified"
}
