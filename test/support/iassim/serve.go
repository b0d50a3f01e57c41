package iassim

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"time"
)

// Running is a Server listening on an address.
type Running struct {
	*Server
	// URL is the tenant URL, e.g. http://127.0.0.1:41234 (https with TLS).
	URL string
	// CAPEM is the PEM CA that signed the server certificate (TLS only).
	CAPEM []byte

	http *http.Server
}

// Serve starts the server on addr ("127.0.0.1:0" picks a port). With useTLS it
// generates a CA and a certificate for 127.0.0.1, ::1 and localhost.
func (s *Server) Serve(addr string, useTLS bool) (*Running, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := &Running{Server: s, http: &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}}
	scheme := "http"
	if useTLS {
		cert, caPEM, err := selfSigned()
		if err != nil {
			_ = l.Close()
			return nil, err
		}
		r.CAPEM = caPEM
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if len(s.opts.ClientCA) > 0 {
			// Asked for, not required: Basic auth stays possible, and a
			// certificate that is not accepted fails the logon with 401.
			cfg.ClientAuth = tls.RequestClientCert
		}
		l = tls.NewListener(l, cfg)
		scheme = "https"
	}
	r.URL = scheme + "://" + l.Addr().String()
	s.mu.Lock()
	s.baseURL = r.URL
	s.mu.Unlock()
	go func() { _ = r.http.Serve(l) }()
	return r, nil
}

// Close stops the server and drops open connections.
func (r *Running) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := r.http.Shutdown(ctx); err != nil {
		return r.http.Close()
	}
	return nil
}

func selfSigned() (tls.Certificate, []byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ias-simulator CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour * 365),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour * 365),
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}
