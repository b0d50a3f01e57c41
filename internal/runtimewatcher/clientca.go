package runtimewatcher

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// LoadClientCAs reads the PEM file of --runtime-watcher-client-ca: the CAs a
// runtime's forwarded client certificate must chain to. No file named: nil. A
// file named that does not exist yet (its Secret not copied yet, mounted
// optional) is an empty pool, which trusts no certificate, and missing is
// true: the listener refuses every event until the file appears, while
// runtimes are still polled.
func LoadClientCAs(file string) (pool *x509.CertPool, missing bool, err error) {
	if file == "" {
		return nil, false, nil
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return x509.NewCertPool(), true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot read --runtime-watcher-client-ca: %w", err)
	}
	pool, err = parseClientCAs(file, b)
	return pool, false, err
}

func parseClientCAs(file string, b []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("--runtime-watcher-client-ca %s holds no PEM certificate", file)
	}
	return pool, nil
}

// clientCAReread is how often the CA file is read again: the Secret it is
// mounted from changes when Lifecycle Manager's CA is renewed, and the kubelet
// updates the file within a minute or so.
const clientCAReread = 10 * time.Second

// followClientCAs reads the CA file again every clientCAReread until ctx ends
// and trusts what it holds from then on. A file that cannot be read, or holds
// no certificate, leaves the CAs trusted so far in place, and says so.
func (l *Listener) followClientCAs(ctx context.Context) {
	file := l.o.ClientCAFile
	// Compared with the CAs in use, not with the file as first read here: a
	// change between LoadClientCAs and this start is a change too.
	var last []byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.o.Clock.After(clientCAReread):
		}
		b, err := os.ReadFile(file)
		if err != nil || bytes.Equal(b, last) {
			if err != nil && !l.caMissing.Load() {
				l.o.Log.Error(err, "Cannot read --runtime-watcher-client-ca again; the CAs read before stay trusted")
			}
			continue
		}
		pool, err := parseClientCAs(file, b)
		if err != nil {
			l.o.Log.Error(err, "The changed --runtime-watcher-client-ca is not used; the CAs read before stay trusted")
			last = b
			continue
		}
		last = b
		if pool.Equal(l.ids.roots.Load()) {
			continue
		}
		l.ids.setRoots(pool)
		l.setCAMissing(false)
		l.o.Log.Info("Trusting the changed --runtime-watcher-client-ca", "file", file)
	}
}

// setCAMissing records whether the CA file is still missing, in the gauge an
// alert reads.
func (l *Listener) setCAMissing(missing bool) {
	l.caMissing.Store(missing)
	v := 0.0
	if missing {
		v = 1
	}
	l.o.Metrics.clientCAMissing.Set(v)
}
