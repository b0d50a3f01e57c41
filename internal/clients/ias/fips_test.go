package ias

import (
	"crypto/fips140"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// TestPKCS12UnderFIPSOnly opens bundles as the packaged provider does, with
// GODEBUG=fips140=only: a modern bundle (AES-256, SHA-256, as IAS hands out)
// opens; a legacy one (3DES, SHA-1) is refused with an error that says why,
// and the process does not crash. The bundles are made here, outside that
// mode, and opened by this test binary run again in it.
func TestPKCS12UnderFIPSOnly(t *testing.T) {
	if dir := os.Getenv("FIPS_TEST_BUNDLES"); dir != "" {
		openUnderFIPSOnly(t, dir)
		return
	}
	now := time.Now()
	ca, err := testcerts.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.Issue("admin", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	modern, err := c.PKCS12("pw")
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := c.LegacyPKCS12("pw")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"modern": modern, "legacy": legacy} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPKCS12UnderFIPSOnly$", "-test.v")
	cmd.Env = append(os.Environ(), "GODEBUG=fips140=only", "FIPS_TEST_BUNDLES="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("under fips140=only: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "fips140 enforced") {
		t.Fatalf("the test did not run in fips140=only mode:\n%s", out)
	}
}

func openUnderFIPSOnly(t *testing.T, dir string) {
	if fips140.Enforced() {
		t.Log("fips140 enforced")
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	certs := NewClientCerts(4)
	if _, err := certs.PKCS12(read("modern"), "pw"); err != nil {
		t.Errorf("a modern bundle: %v", err)
	}
	_, err := certs.PKCS12(read("legacy"), "pw")
	if diff := cmp.Diff(ErrPKCS12Legacy, err, test.EquateErrors()); diff != "" {
		t.Errorf("a legacy bundle: -want error, +got error:\n%s", diff)
	}
}
