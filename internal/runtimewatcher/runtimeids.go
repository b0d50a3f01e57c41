package runtimewatcher

import (
	"crypto/sha256"
	"net/http"

	"github.com/kyma-project/runtime-watcher/listener/pkg/v2/certificate"
	"k8s.io/utils/lru"
)

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
type runtimeIDs struct {
	cache *lru.Cache
}

func newRuntimeIDs() *runtimeIDs { return &runtimeIDs{cache: lru.New(runtimeIDCacheSize)} }

// of returns the runtime ID of request r as certificate.GetCertificateFromHeader
// reads it ("" if the common name is empty), or that function's error.
func (c *runtimeIDs) of(r *http.Request) (string, error) {
	values := r.Header[certificate.XFCCHeader]
	if len(values) == 0 || len(values[0]) > certificate.Limit32KiB {
		// Missing or too long: the module's own error.
		_, err := certificate.GetCertificateFromHeader(r)
		return "", err
	}
	key := sha256.Sum256([]byte(values[0]))
	if id, ok := c.cache.Get(key); ok {
		return id.(string), nil
	}
	cert, err := certificate.GetCertificateFromHeader(r)
	if err != nil {
		return "", err
	}
	id := cert.Subject.CommonName
	if id != "" {
		c.cache.Add(key, id)
	}
	return id, nil
}
