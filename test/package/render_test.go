package pkg

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// functions writes the Function the Composition names, pointing at the
// composition function running locally.
func functions(t *testing.T) string {
	t.Helper()
	fn := fmt.Sprintf(`apiVersion: pkg.crossplane.io/v1
kind: Function
metadata:
  name: kyma-project-function-eventing-auth
  annotations:
    render.crossplane.io/runtime: Development
    render.crossplane.io/runtime-development-target: %s
spec:
  package: ghcr.io/kyma-project/function-eventing-auth
`, startFunction(t, filepath.Join(os.Getenv("XPKG_DIR"), "function-eventing-auth")))
	path := filepath.Join(t.TempDir(), "functions.yaml")
	if err := os.WriteFile(path, []byte(fn), 0o644); err != nil {
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
			// The function writes the provider's kinds out by name: what it
			// composes must be valid against the provider's CRDs. (The XR comes
			// first, and only with the fields core writes.)
			docs := strings.Split(out, "\n---\n")
			rendered := filepath.Join(t.TempDir(), "composed.yaml")
			if err := os.WriteFile(rendered, []byte(strings.Join(docs[1:], "\n---\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			vout, verr, err := crossplane(t, "resource", "validate", extensions(), rendered, "--crossplane-image=", "--error-on-missing-schemas")
			if err != nil {
				t.Fatalf("the rendered resources do not validate against the CRDs: %v\n%s%s", err, vout, verr)
			}
		})
	}
}
