package localstack

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadAuditWaitsForALineBeingWritten: a line that does not parse yet (the
// API server still writing that part of the file) is read again next time, and
// fails the reading only when it stays broken.
func TestReadAuditWaitsForALineBeingWritten(t *testing.T) {
	const good = `{"verb":"create","userAgent":"crossplane-core/v2.4.2","objectRef":{"resource":"secrets"}}` + "\n"
	log := filepath.Join(t.TempDir(), "audit.log")
	write := func(content string) {
		if err := os.WriteFile(log, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := &Stack{AuditLog: log}
	write(good + `{"verb":"upd` + "\x00\x00\n")
	reqs, offset, err := s.ReadAudit(0)
	if err != nil || len(reqs) != 1 || offset != int64(len(good)) {
		t.Fatalf("first reading: %d requests to %d, %v; want 1 to %d and no error", len(reqs), offset, err, len(good))
	}
	// Written out meanwhile: read whole.
	write(good + good)
	if reqs, offset, err = s.ReadAudit(offset); err != nil || len(reqs) != 1 || offset != int64(2*len(good)) {
		t.Fatalf("after the line was written: %d requests to %d, %v", len(reqs), offset, err)
	}
	// A line that stays broken fails, after a few readings.
	write(good + good + "junk\n")
	for i := 1; ; i++ {
		_, _, err := s.ReadAudit(offset)
		if err != nil {
			if i < auditRereads {
				t.Fatalf("failed at reading %d, before %d", i, auditRereads)
			}
			break
		}
		if i > auditRereads {
			t.Fatal("a broken line never failed the reading")
		}
	}
}
