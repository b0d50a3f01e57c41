package localstack

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSetCondition(t *testing.T) {
	healthy := func() map[string]any {
		return map[string]any{"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision"}
	}
	// As core writes it back: its typed condition drops the empty message.
	coreWritten := map[string]any{"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	old := map[string]any{"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	other := map[string]any{"type": "RevisionHealthy", "status": "True"}
	cases := map[string]struct {
		conditions  []any
		set         map[string]any
		wantChanged bool
		wantLen     int
		wantTime    string // "" means any new time
	}{
		"added":     {conditions: []any{other}, set: healthy(), wantChanged: true, wantLen: 2},
		"unchanged": {conditions: []any{other, old}, set: healthy(), wantChanged: false, wantLen: 2, wantTime: "2026-01-01T00:00:00Z"},
		// A missing message and an empty one are the same to core: no write,
		// or the two writers rewrite the revision in turn.
		"unchanged as core wrote it": {conditions: []any{other, coreWritten}, set: healthy(), wantChanged: false, wantLen: 2, wantTime: "2026-01-01T00:00:00Z"},
		"same status, new message keeps the time": {conditions: []any{old}, set: map[string]any{"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision", "message": "again"},
			wantChanged: true, wantLen: 1, wantTime: "2026-01-01T00:00:00Z"},
		"status flips": {conditions: []any{old}, set: map[string]any{"type": "RuntimeHealthy", "status": "False", "reason": "UnhealthyPackageRevision", "message": "exited"},
			wantChanged: true, wantLen: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": copyConditions(tc.conditions)}}}
			if got := setCondition(u, tc.set); got != tc.wantChanged {
				t.Errorf("changed = %v, want %v", got, tc.wantChanged)
			}
			cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			if len(cs) != tc.wantLen {
				t.Fatalf("%d conditions, want %d: %v", len(cs), tc.wantLen, cs)
			}
			for _, c := range cs {
				m := c.(map[string]any)
				if m["type"] != "RuntimeHealthy" {
					continue
				}
				if !sameFields(m, tc.set, "status", "message") {
					t.Errorf("condition %v, want %v", m, tc.set)
				}
				if tc.wantTime != "" && m["lastTransitionTime"] != tc.wantTime {
					t.Errorf("lastTransitionTime %v, want %v", m["lastTransitionTime"], tc.wantTime)
				}
				if tc.wantTime == "" && (m["lastTransitionTime"] == "" || m["lastTransitionTime"] == old["lastTransitionTime"]) {
					t.Errorf("lastTransitionTime %v, want a new one", m["lastTransitionTime"])
				}
			}
		})
	}
}

func copyConditions(cs []any) []any {
	out := make([]any, len(cs))
	for i, c := range cs {
		m := map[string]any{}
		for k, v := range c.(map[string]any) {
			m[k] = v
		}
		out[i] = m
	}
	return out
}

func TestCopyFromTar(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range map[string]string{"etc/ssl/certs/ca-certificates.crt": "ca", "usr/local/bin/provider": "binary"} {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(body))})
		_, _ = tw.Write([]byte(body))
	}
	_ = tw.Close()
	to := filepath.Join(t.TempDir(), "provider")
	found, err := copyFromTar(bytes.NewReader(buf.Bytes()), "usr/local/bin/provider", to)
	if err != nil || !found {
		t.Fatalf("copyFromTar: found %v, %v", found, err)
	}
	if b, _ := os.ReadFile(to); string(b) != "binary" {
		t.Errorf("wrote %q, want %q", b, "binary")
	}
	if found, err := copyFromTar(bytes.NewReader(buf.Bytes()), "usr/bin/missing", to); found || err != nil {
		t.Errorf("a missing file: found %v, %v", found, err)
	}
}

func TestMirroredAndRepositoryBase(t *testing.T) {
	s := &Stack{Registry: "127.0.0.1:5000"}
	for ref, want := range map[string]struct{ mirrored, base string }{
		"ghcr.io/kyma-project/provider-eventing-auth:v0.1.0":               {"127.0.0.1:5000/kyma-project/provider-eventing-auth:v0.1.0", "provider-eventing-auth"},
		"xpkg.crossplane.io/crossplane-contrib/function-auto-ready:v0.7.0": {"127.0.0.1:5000/crossplane-contrib/function-auto-ready:v0.7.0", "function-auto-ready"},
	} {
		if got := s.Mirrored(ref); got != want.mirrored {
			t.Errorf("Mirrored(%s) = %s, want %s", ref, got, want.mirrored)
		}
		if got, err := repositoryBase(ref); err != nil || got != want.base {
			t.Errorf("repositoryBase(%s) = %s, %v, want %s", ref, got, err, want.base)
		}
	}
}
