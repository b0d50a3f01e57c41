package main

import (
	"strings"
	"testing"
)

// TestModulesShareVersions: the modules a cold `make local-run` builds ask for
// one version of each dependency they share, so that each package is compiled
// once. A module that lags is listed with the command that aligns it.
func TestModulesShareVersions(t *testing.T) {
	lags, err := Check("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(lags) > 0 {
		var b strings.Builder
		for _, l := range lags {
			b.WriteString("\n" + l.String())
		}
		t.Errorf("modules build different versions of a shared dependency, so a cold build compiles it twice; run go run ./hack/modalign:%s", b.String())
	}
}
