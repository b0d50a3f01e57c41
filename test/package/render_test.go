package pkg

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// functions writes the Functions the Composition names, each pointing at a
// locally running function.
func functions(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, f := range []struct{ name, binary string }{
		{"crossplane-contrib-function-go-templating", "function-go-templating"},
		{"crossplane-contrib-function-auto-ready", "function-auto-ready"},
	} {
		fmt.Fprintf(&b, `---
apiVersion: pkg.crossplane.io/v1
kind: Function
metadata:
  name: %s
  annotations:
    render.crossplane.io/runtime: Development
    render.crossplane.io/runtime-development-target: %s
spec:
  package: xpkg.crossplane.io/crossplane-contrib/%s
`, f.name, startFunction(t, f.binary), f.binary)
	}
	path := filepath.Join(t.TempDir(), "functions.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompositionRender(t *testing.T) {
	fns := functions(t)
	cases := map[string]struct {
		xr       string
		observed string // composed resources as they stand, "" for none yet
		golden   string
	}{
		"NewRuntime": {xr: "testdata/xr.yaml", golden: "render-new.golden.yaml"},
		"NoAccount":  {xr: "testdata/xr-no-account.yaml", golden: "render-no-account.golden.yaml"},
		// Migrated from eventing-auth-manager: the known app and its secrets' marker.
		"Migrated":         {xr: "testdata/xr-migrated.yaml", golden: "render-migrated.golden.yaml"},
		"AllComposedReady": {xr: "testdata/xr.yaml", observed: "testdata/observed-ready.yaml", golden: "render-ready.golden.yaml"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			args := []string{"composition", "render", tc.xr, repo("package", "configuration", "composition.yaml"), fns,
				"--crossplane-binary=" + filepath.Join(tools, "crossplane-core"),
				"--xrd=" + repo("package", "configuration", "definition.yaml")}
			if tc.observed != "" {
				args = append(args, "--observed-resources="+tc.observed)
			}
			out, stderr, err := crossplane(t, args...)
			if err != nil {
				t.Fatalf("render failed: %v\n%s", err, stderr)
			}
			golden(t, tc.golden, out)
		})
	}
}
