package localstack

import (
	"encoding/base64"
	"os"
	"path/filepath"

	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// ca signs the certificates of the local stack: Crossplane's client certificate
// for functions, the functions' and the webhook's server certificates. Every
// server is on 127.0.0.1, so that is the name they carry.
type ca struct {
	*testcerts.CA
}

func newCA() (*ca, error) {
	c, err := testcerts.NewCA("eventing-auth local stack")
	return &ca{CA: c}, err
}

// writeCerts writes ca.crt, tls.crt and tls.key into dir, as Crossplane and the
// function SDK read them.
func (c *ca) writeCerts(dir, name string) error {
	cert, err := c.IssueServer(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for f, b := range map[string][]byte{"ca.crt": c.PEM, "tls.crt": cert.CertPEM, "tls.key": cert.KeyPEM} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
