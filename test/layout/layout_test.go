// Package layout holds the repository's layout to what ships: internal/ is
// what the released binaries run, test/ what only tests, benches and the
// local stack use.
package layout

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/kyma-project/provider-eventing-auth"

// shipped are the binaries a release carries: the provider (in its package)
// and the migration from eventing-auth-manager.
var shipped = []string{"./cmd/provider", "./cmd/migrate"}

// TestShippedBinariesImportNoTestSupport: no package under test/ is linked
// into a shipped binary, and every package under internal/ is (internal/
// holds nothing but what ships).
func TestShippedBinariesImportNoTestSupport(t *testing.T) {
	deps := goList(t, append([]string{"-deps"}, shipped...)...)
	for _, p := range deps {
		if strings.HasPrefix(p, module+"/test/") {
			t.Errorf("%s is linked into a shipped binary (%s); test support must stay out of it", p, strings.Join(shipped, ", "))
		}
	}
	for _, p := range goList(t, "./internal/...") {
		if !slices.Contains(deps, p) {
			t.Errorf("%s is under internal/ but no shipped binary imports it: move it under test/support/ or delete it", p)
		}
	}
}

// goList runs go list from the module's root and returns the import paths.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), append([]string{"list", "-f", "{{.ImportPath}}"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}
