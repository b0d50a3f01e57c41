package iassim

import (
	"time"

	"github.com/google/uuid"
)

// Stats counts answered requests by operation and status code.
type Stats map[string]map[int]int

// Count returns how many requests of op were answered with status; status 0 means
// any status.
func (st Stats) Count(op string, status int) int {
	if status != 0 {
		return st[op][status]
	}
	n := 0
	for _, c := range st[op] {
		n += c
	}
	return n
}

// Since is what was answered after before, a count taken earlier: the counts
// that grew, by how much.
func (st Stats) Since(before Stats) Stats {
	out := Stats{}
	for op, codes := range st {
		for code, n := range codes {
			if d := n - before[op][code]; d > 0 {
				if out[op] == nil {
					out[op] = map[int]int{}
				}
				out[op][code] = d
			}
		}
	}
	return out
}

// Stats returns a copy of the request counts.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Stats{}
	for op, m := range s.stats {
		out[op] = map[int]int{}
		for k, v := range m {
			out[op][k] = v
		}
	}
	return out
}

// Requests returns the log of answered requests, oldest first.
func (s *Server) Requests() []RequestRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RequestRecord(nil), s.log...)
}

// ResetStats forgets the counts and the request log.
func (s *Server) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = map[string]map[int]int{}
	s.log = nil
}

// InjectFault adds a fault.
func (s *Server) InjectFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// ClearFaults removes every fault, including pending FailAfterCreate ones.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
	s.failAfterPost = 0
}

// FailAfterCreate makes the next n application creations store the app and then
// answer 500, as when IAS fails after committing.
func (s *Server) FailAfterCreate(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAfterPost = n
}

// SetLatency sets the delay added to every API answer.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// SetListLag hides apps from lists until they are d old.
func (s *Server) SetListLag(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listLag = d
}

// SetCredentials changes the Basic auth credentials the tenant accepts.
func (s *Server) SetCredentials(username, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.username, s.password = username, password
}

// AddUser adds a technical user with its password, as a tenant has many.
func (s *Server) AddUser(username, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users == nil {
		s.users = map[string]string{}
	}
	s.users[username] = password
}

// Apps returns copies of all apps, in creation order.
func (s *Server) Apps() []App {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]App, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.apps[id].clone())
	}
	return out
}

// AppsNamed returns copies of the apps with the given name. Only those are
// copied: benches ask it of thousands of runtimes while the tenant serves the
// provider under the same lock.
func (s *Server) AppsNamed(name string) []App {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []App
	for _, id := range s.order {
		if a := s.apps[id]; a.Name == name {
			out = append(out, a.clone())
		}
	}
	return out
}

// NameCounts returns how many apps bear each name: one pass over the tenant
// for a caller that asks about many names at once, where AppsNamed for each
// would hold the tenant's lock once per name.
func (s *Server) NameCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.apps))
	for _, a := range s.apps {
		out[a.Name]++
	}
	return out
}

// App returns a copy of the app with the given ID.
func (s *Server) App(id string) (App, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.apps[id]
	if !ok {
		return App{}, false
	}
	return a.clone(), true
}

// AddApp stores an app as if created by someone else and returns its ID. Empty
// ID, Type, SSOType and ClientID are filled in.
func (s *Server) AddApp(a App) string {
	if a.ID == "" {
		a.ID = uuid.NewString()
	}
	if a.Type == "" {
		a.Type = "charged"
	}
	if a.SSOType == "" {
		a.SSOType = "openIdConnect"
	}
	if a.ClientID == "" {
		a.ClientID = uuid.NewString()
	}
	if a.Created.IsZero() {
		a.Created = time.Now()
	}
	for i := range a.Secrets {
		if a.Secrets[i].ID == "" {
			a.Secrets[i].ID = uuid.NewString()
		}
		if a.Secrets[i].Value == "" {
			a.Secrets[i].Value = newSecretValue()
		}
		a.Secrets[i].Hint = a.Secrets[i].Value[:4]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apps[a.ID] = &a
	s.order = append(s.order, a.ID)
	return a.ID
}

// MutateApp changes an app in place, as a person in the IAS console would.
func (s *Server) MutateApp(id string, fn func(*App)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.apps[id]
	if ok {
		fn(a)
	}
	return ok
}

// DeleteApp removes an app behind the provider's back.
func (s *Server) DeleteApp(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(id)
}

// removeLocked forgets an app; callers hold s.mu.
func (s *Server) removeLocked(id string) {
	delete(s.apps, id)
	for i, o := range s.order {
		if o == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// LastBody is the body of the last POST of the operation (a create), as sent.
func (s *Server) LastBody(op string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastBodies[op]
}
