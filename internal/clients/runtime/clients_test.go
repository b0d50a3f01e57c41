package runtime

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"
)

// caData is a real CA certificate, base64 as in a kubeconfig.
var caData = func() string {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}()

func tokenKubeconfig(i int) []byte {
	k := kubeconfig("", fmt.Sprintf("    token: tok-%d", i))
	return []byte(strings.Replace(k, "Q0EtREFUQS1TRUNSRVQ=", caData, 1))
}

// TestClientsCountBuildsAndEvictions: what the metrics report. (The cache's
// bound itself is k8s.io/utils/lru's.)
func TestClientsCountBuildsAndEvictions(t *testing.T) {
	c := NewClients(Options{Size: 3})
	for i := range 10 {
		if _, err := c.For(tokenKubeconfig(i)); err != nil {
			t.Fatal(err)
		}
	}
	if s := c.Stats(); s.Built != 10 || s.Evicted != 7 {
		t.Fatalf("stats %+v, want built 10, evicted 7", s)
	}
}

func TestClientsReuseByDigest(t *testing.T) {
	c := NewClients(Options{Size: 2})
	a, err := c.For(tokenKubeconfig(1))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.For(tokenKubeconfig(1))
	if a != again {
		t.Error("the same kubeconfig built a second client")
	}
	changed, _ := c.For(tokenKubeconfig(2))
	if changed == a {
		t.Error("a changed kubeconfig reused the old client")
	}
	if s := c.Stats(); s.Built != 2 {
		t.Errorf("built %d clients, want 2", s.Built)
	}
}

func TestClientsRefuseWithoutCaching(t *testing.T) {
	c := NewClients(Options{Size: 2})
	if _, err := c.For([]byte(kubeconfig("", "    tokenFile: /t"))); err == nil {
		t.Fatal("a token file was accepted")
	}
	if s := c.Stats(); s.Len != 0 {
		t.Errorf("a refused kubeconfig was cached: %+v", s)
	}
}

func TestClientsRefuseBadCAData(t *testing.T) {
	c := NewClients(Options{Size: 2})
	_, err := c.For([]byte(kubeconfig("", "    token: t")))
	if err == nil || !strings.Contains(err.Error(), "TLS settings") {
		t.Fatalf("error %v, want a TLS settings refusal", err)
	}
}
