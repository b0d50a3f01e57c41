package runtimewatcher

import (
	"crypto/x509"
	"fmt"
	"os"
)

// LoadClientCAs reads the PEM file of --runtime-watcher-client-ca: the CAs a
// runtime's forwarded client certificate must chain to. No file named: nil.
func LoadClientCAs(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read --runtime-watcher-client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("--runtime-watcher-client-ca %s holds no PEM certificate", file)
	}
	return pool, nil
}
