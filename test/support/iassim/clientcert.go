package iassim

import (
	"crypto/x509"
	"net/http"
	"time"
)

// peerCert is the client certificate a request's TLS connection presented.
func peerCert(r *http.Request) *x509.Certificate {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil
	}
	return r.TLS.PeerCertificates[0]
}

// certAccepted tells whether the tenant logs c on as its system administrator:
// signed by the trusted CA, within its validity, for client authentication, and
// of the mapped subject. Anything else is a failed logon (401), as a wrong
// password is.
func (s *Server) certAccepted(r *http.Request, c *x509.Certificate) bool {
	if s.clientRoots == nil {
		return false
	}
	inter := x509.NewCertPool()
	for _, ic := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(ic)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: s.clientRoots, Intermediates: inter, CurrentTime: time.Now(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return false
	}
	return c.Subject.CommonName == s.opts.ClientCertSubject
}

// logonOf says how a request logged on, for the request log.
func logonOf(r *http.Request) string {
	if c := peerCert(r); c != nil {
		return "certificate " + c.SerialNumber.String()
	}
	if _, _, ok := r.BasicAuth(); ok {
		return "basic"
	}
	return ""
}
