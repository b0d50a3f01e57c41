package pkg

import (
	"regexp"
	"strings"
	"testing"
)

// extensions are the schemas users' resources are validated against: the
// provider's CRDs and the XRD.
func extensions() string {
	return repo("package", "crds") + "," + repo("package", "configuration", "definition.yaml")
}

func TestExamplesValidate(t *testing.T) {
	// --crossplane-image= keeps validation offline: no image is pulled for the
	// built-in schemas.
	out, stderr, err := crossplane(t, "resource", "validate", extensions(), repo("examples"), "--crossplane-image=", "--error-on-missing-schemas")
	if err != nil {
		t.Fatalf("the examples do not validate: %v\n%s%s", err, out, stderr)
	}
	for _, kind := range []string{"ClusterProviderConfig", "IASApplication", "RuntimeSecret", "EventingAuth"} {
		if !regexp.MustCompile(`Kind=` + kind + `, \S+ validated successfully`).MatchString(out) {
			t.Errorf("no successful validation of a %s reported:\n%s", kind, out)
		}
	}
}

func TestInvalidResourcesAreRefused(t *testing.T) {
	out, stderr, err := crossplane(t, "resource", "validate", extensions(), "testdata/invalid.yaml", "--crossplane-image=")
	if err == nil {
		t.Fatalf("invalid resources validated:\n%s", out)
	}
	for _, want := range []string{"spec.forProvider.runtimeId", "spec.runtimeId"} {
		if !strings.Contains(out+stderr, want) {
			t.Errorf("validation does not name %s:\n%s%s", want, out, stderr)
		}
	}
}
