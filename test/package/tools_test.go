// Package pkg tests the Crossplane packages and the Composition with the real
// Crossplane CLI, Crossplane core and the composition functions, all built from
// the Go module proxy by `make test`.
package pkg

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// tools is the directory with crossplane and crossplane-core; the packages
// and the composition function's binary are in $XPKG_DIR.
var tools string

func TestMain(m *testing.M) {
	flag.Parse()
	tools = os.Getenv("CROSSPLANE_TOOLS")
	if tools == "" || os.Getenv("XPKG_DIR") == "" {
		fmt.Fprintln(os.Stderr, "CROSSPLANE_TOOLS and XPKG_DIR are not set: run `make test`, which builds the Crossplane CLI, core, the packages and the composition function first")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// repo is a path relative to the repository's root.
func repo(p ...string) string {
	return filepath.Join(append([]string{"..", ".."}, p...)...)
}

// crossplane runs the Crossplane CLI and returns stdout, stderr and its error.
func crossplane(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(filepath.Join(tools, "crossplane"), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// startFunction runs a composition function locally without TLS and returns its
// address.
func startFunction(t *testing.T, binary string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	cmd := exec.Command(binary, "--insecure", "--address="+addr)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s: %v", binary, addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; if the change is intended, run `go test ./test/package -update`\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
