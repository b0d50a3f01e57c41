package localstack

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// GarbageCollectorUser is the user kube-controller-manager authenticates as.
const GarbageCollectorUser = "system:kube-controller-manager"

// auditPolicy logs the metadata of every write, and of every request of the
// garbage collector (whose reads spend its request budget as its writes do),
// once each, when the answer is complete.
var auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: Metadata
  users: [` + GarbageCollectorUser + `]
- level: None
`

// auditLog has the management API server write its audit log into the
// work directory.
func (s *Stack) auditLog() error {
	policy := filepath.Join(s.Work, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return err
	}
	s.AuditLog = filepath.Join(s.Work, "audit.log")
	s.mgmt.ControlPlane.GetAPIServer().Configure().
		Set("audit-policy-file", policy).
		Set("audit-log-path", s.AuditLog).
		Set("audit-log-format", "json").
		// Never rotated (its default rotates at 100 MB), so that a reading
		// from an offset finds every line after it.
		Set("audit-log-maxsize", "1000000").
		// Written as each answer completes: a reading right after a burst
		// sees all of it.
		Set("audit-log-mode", "blocking")
	return nil
}

// AuditRequest is what the audit log says of one request.
type AuditRequest struct {
	// Verb is the API verb (create, update, patch, delete, get, ...).
	Verb string
	// Resource is the resource, with its subresource after a slash.
	Resource string
	// Writer is who made the request: the program its user agent names
	// (provider, crossplane-core, kube-controller-manager, kube-apiserver, the
	// bench's e2e.test).
	Writer string
}

type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
}

// auditRereads is how many readings in a row a line may fail to parse before
// ReadAudit says so.
const auditRereads = 5

// ReadAudit reads the audit log from offset on and returns its requests and
// the offset after them, for the next reading.
func (s *Stack) ReadAudit(offset int64) ([]AuditRequest, int64, error) {
	if s.AuditLog == "" {
		return nil, offset, fmt.Errorf("the stack runs without an audit log")
	}
	f, err := os.Open(s.AuditLog)
	if err != nil {
		return nil, offset, err
	}
	defer f.Close() //nolint:errcheck // Read only.
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var out []AuditRequest
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			// A line still being written is read next time.
			return out, offset, nil
		}
		if err != nil {
			return out, offset, err
		}
		var e auditEvent
		if err := json.Unmarshal(line, &e); err != nil {
			// The API server may still be writing this part of the file: it
			// is read again next time, and only a line that stays broken
			// over several readings fails.
			if s.auditUnreadAt != offset {
				s.auditUnreadAt, s.auditUnread = offset, 0
			}
			if s.auditUnread++; s.auditUnread >= auditRereads {
				return out, offset, fmt.Errorf("audit log at %d, read %d times: %w", offset, s.auditUnread, err)
			}
			return out, offset, nil
		}
		offset += int64(len(line))
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		out = append(out, AuditRequest{Verb: e.Verb, Resource: res, Writer: writer(e.UserAgent, e.User.Username)})
	}
}

// writer is the program a user agent names ("crossplane-core/v2.4.2 (linux)"
// is crossplane-core), or the user when there is none.
func writer(agent, user string) string {
	if agent == "" {
		return user
	}
	name, _, _ := strings.Cut(agent, "/")
	return name
}
