//go:build e2e

package e2e

import (
	"os"
	"testing"

	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
)

// auditReader counts, from the stack's audit log, the requests made since
// its last reading.
type auditReader struct {
	b      testing.TB
	s      *localstack.Stack
	offset int64
}

// newAuditReader counts from the end of the log as it is now.
func newAuditReader(b testing.TB, s *localstack.Stack) *auditReader {
	fi, err := os.Stat(s.AuditLog)
	if err != nil {
		b.Fatal(err)
	}
	return &auditReader{b: b, s: s, offset: fi.Size()}
}

// auditCounts are the writes by "resource verb writer", and the garbage
// collector's requests of every verb by "resource verb".
type auditCounts struct {
	writes, garbageCollector map[string]float64
}

// since counts the requests made since the last call.
func (a *auditReader) since() auditCounts {
	reqs, offset, err := a.s.ReadAudit(a.offset)
	if err != nil {
		a.b.Fatal(err)
	}
	a.offset = offset
	out := auditCounts{writes: map[string]float64{}, garbageCollector: map[string]float64{}}
	for _, r := range reqs {
		if r.Writer == "kube-controller-manager" {
			out.garbageCollector[r.Resource+" "+r.Verb]++
		}
		switch r.Verb {
		case "create", "update", "patch", "delete", "deletecollection":
			out.writes[r.Resource+" "+r.Verb+" "+r.Writer]++
		}
	}
	return out
}
