// Package iassim is an HTTP simulator of the SAP Cloud Identity Services
// Application Directory API, speaking it as the real service does (see
// shared/ias/README.md): Basic auth, apps CRUD, filters, cursor pagination, api
// secrets, the well-known document, IAS error bodies, a per-client rate limit and
// knobs for latency and injected faults. Tests, the local demo and the benchmarks
// start it in-process; cmd/ias-simulator runs it on its own.
package iassim

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
)

// Options configure a Server. Zero values take the defaults.
type Options struct {
	Username string // default "admin"
	Password string // default "admin-password"
	// RateLimit is the per-client (originating IP) limit in requests per second;
	// default 50, as IAS. Negative disables it.
	RateLimit float64
	// Latency is added to every API answer.
	Latency time.Duration
	// HoldFor bounds how long a FaultTimeout holds a request; default 30s.
	HoldFor time.Duration
	// EmptyFilter404 answers 404 for a filtered list with no match, as some tenants do.
	EmptyFilter404 bool
	// ListLag hides an app from lists until it is this old: IAS's reads do not
	// follow its writes at once. GET by ID sees the app at once.
	ListLag time.Duration
	// OpaqueCursors hands out list cursors that are not UUIDs. No recording
	// shows a real one, and the spec types nextCursor as a plain string.
	OpaqueCursors bool
	// ClientCA, with TLS, makes the tenant accept client certificates that
	// this PEM CA signed for the subject common name ClientCertSubject (its
	// system administrator), as IAS does for a "System as Administrator";
	// Basic auth keeps working beside them.
	ClientCA          []byte
	ClientCertSubject string
}

// RequestRecord is one request the simulator answered.
type RequestRecord struct {
	Time      time.Time `json:"time"`
	Operation string    `json:"operation"`
	Status    int       `json:"status"`
	// Auth is how the request logged on: "basic", "certificate <serial>" or
	// "" (neither).
	Auth string `json:"auth,omitempty"`
	// Filter is a listing's filter; "" for the listing of all apps.
	Filter string `json:"filter,omitempty"`
}

// Server is the simulated tenant.
type Server struct {
	// lastBodies are the last request body of each operation sent by POST.
	lastBodies map[string][]byte
	opts       Options
	// clientRoots is opts.ClientCA parsed; nil: no certificate is accepted.
	clientRoots *x509.CertPool

	mu       sync.Mutex
	username string
	// users are further technical users a tenant has, each with its password.
	users         map[string]string
	password      string
	baseURL       string
	apps          map[string]*App
	order         []string // creation order, for stable pagination
	faults        []*Fault
	failAfterPost int
	latency       time.Duration
	listLag       time.Duration
	limiters      map[string]*rate.Limiter
	stats         map[string]map[int]int
	log           []RequestRecord
	// endless and oversized are the hostile answers (hostile.go).
	endless   map[string]string
	oversized map[string]int64
}

// maxLog bounds the request log.
const maxLog = 200000

// New returns a Server with the given options.
func New(opts Options) *Server {
	if opts.Username == "" {
		opts.Username = "admin"
	}
	if opts.Password == "" {
		opts.Password = "admin-password"
	}
	if opts.RateLimit == 0 {
		opts.RateLimit = 50
	}
	if opts.HoldFor == 0 {
		opts.HoldFor = 30 * time.Second
	}
	var roots *x509.CertPool
	if pool := x509.NewCertPool(); pool.AppendCertsFromPEM(opts.ClientCA) {
		roots = pool
	}
	return &Server{
		opts:        opts,
		clientRoots: roots,
		username:    opts.Username,
		password:    opts.Password,
		latency:     opts.Latency,
		listLag:     opts.ListLag,
		apps:        map[string]*App{},
		limiters:    map[string]*rate.Limiter{},
		stats:       map[string]map[int]int{},
	}
}

// Handler serves the API, the well-known document and the /_sim/ admin endpoints.
func (s *Server) Handler() http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("GET /Applications/v1/{$}", s.op(operation.ListApplications, s.listApps))
	api.HandleFunc("POST /Applications/v1/{$}", s.op(operation.CreateApplication, s.createApp))
	api.HandleFunc("GET /Applications/v1/{id}", s.op(operation.GetApplication, s.getApp))
	api.HandleFunc("PATCH /Applications/v1/{id}", s.op(operation.PatchApplication, s.patchApp))
	api.HandleFunc("PUT /Applications/v1/{id}", s.op(operation.UpdateApplication, s.putApp))
	api.HandleFunc("DELETE /Applications/v1/{id}", s.op(operation.DeleteApplication, s.deleteApp))
	api.HandleFunc("GET /Applications/v1/{id}/apiSecrets", s.op(operation.ListAPISecrets, s.listSecrets))
	api.HandleFunc("POST /Applications/v1/{id}/apiSecrets", s.op(operation.CreateAPISecret, s.createSecret))
	api.HandleFunc("DELETE /Applications/v1/{id}/apiSecrets", s.op(operation.DeleteAPISecret, s.deleteSecret))
	api.HandleFunc("GET /.well-known/openid-configuration", s.op(operation.WellKnown, s.wellKnown))
	api.HandleFunc("POST /oauth2/token", s.token)
	api.HandleFunc("GET /_sim/stats", s.serveStats)
	api.HandleFunc("POST /_sim/faults", s.serveFaults)
	api.HandleFunc("DELETE /_sim/faults", func(w http.ResponseWriter, _ *http.Request) { s.ClearFaults(); w.WriteHeader(http.StatusNoContent) })
	return api
}

// statusRecorder remembers the status code written.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Hijack lets FaultReset drop the connection.
func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return r.ResponseWriter.(http.Hijacker).Hijack() //nolint:forcetypeassert // net/http's writer hijacks.
}

// op wraps an operation with rate limiting, faults, latency, auth and counting.
func (s *Server) op(name string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		defer func() { s.count(name, rec.status, logonOf(r), r.URL.Query().Get("filter")) }()
		if r.Method == http.MethodPost {
			// Kept to hold what a client sends to what IAS's clients send.
			b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
			r.Body = io.NopCloser(bytes.NewReader(b))
			s.mu.Lock()
			if s.lastBodies == nil {
				s.lastBodies = map[string][]byte{}
			}
			s.lastBodies[name] = b
			s.mu.Unlock()
		}

		if wait, ok := s.admit(r); !ok {
			secs := int(wait/time.Second) + 1
			rec.Header().Set("Retry-After", itoa(secs))
			writeError(rec, http.StatusTooManyRequests, "Too many requests")
			return
		}

		s.mu.Lock()
		f, rest := pickFault(s.faults, name)
		s.faults = rest
		latency := s.latency
		s.mu.Unlock()

		if latency > 0 {
			select {
			case <-time.After(latency):
			case <-r.Context().Done():
				rec.status = 499
				return
			}
		}
		if f != nil {
			s.applyFault(rec, r, f)
			return
		}
		if name != operation.WellKnown && !s.authorized(r) {
			rec.Header().Set("WWW-Authenticate", `Basic realm="IAS"`)
			writeError(rec, http.StatusUnauthorized, "Authentication failed")
			return
		}
		h(rec, r)
	}
}

// admit applies the per-client rate limit; on refusal it says how long to wait.
func (s *Server) admit(r *http.Request) (time.Duration, bool) {
	if s.opts.RateLimit < 0 {
		return 0, true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	s.mu.Lock()
	l, ok := s.limiters[host]
	if !ok {
		l = rate.NewLimiter(rate.Limit(s.opts.RateLimit), int(s.opts.RateLimit))
		s.limiters[host] = l
	}
	s.mu.Unlock()
	res := l.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return d, false
	}
	return 0, true
}

func (s *Server) authorized(r *http.Request) bool {
	if c := peerCert(r); c != nil {
		return s.certAccepted(r, c)
	}
	u, p, ok := r.BasicAuth()
	if !ok {
		return false
	}
	s.mu.Lock()
	wantU, wantP := s.username, s.password
	if other, ok := s.users[u]; ok {
		wantU, wantP = u, other
	}
	s.mu.Unlock()
	return subtle.ConstantTimeCompare([]byte(u), []byte(wantU)) == 1 &&
		subtle.ConstantTimeCompare([]byte(p), []byte(wantP)) == 1
}

func (s *Server) count(op string, status int, auth, filter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats[op] == nil {
		s.stats[op] = map[int]int{}
	}
	s.stats[op][status]++
	if len(s.log) < maxLog {
		s.log = append(s.log, RequestRecord{Time: time.Now(), Operation: op, Status: status, Auth: auth, Filter: filter})
	}
}

func (s *Server) base(r *http.Request) string {
	s.mu.Lock()
	b := s.baseURL
	s.mu.Unlock()
	if b != "" {
		return b
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Server) wellKnown(w http.ResponseWriter, r *http.Request) {
	if s.oversizedBody(w, r, WellKnownTarget) {
		return
	}
	b := s.base(r)
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                 b,
		"authorization_endpoint": b + "/oauth2/authorize",
		"token_endpoint":         b + "/oauth2/token",
		"jwks_uri":               b + "/oauth2/certs",
		"userinfo_endpoint":      b + "/oauth2/userinfo",
	})
}

func (s *Server) serveStats(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Stats())
}

func (s *Server) serveFaults(w http.ResponseWriter, r *http.Request) {
	var f Fault
	if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
		writeError(w, http.StatusBadRequest, "invalid fault: "+err.Error())
		return
	}
	s.InjectFault(f)
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	// As every recorded answer.
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with the IAS error body.
func writeError(w http.ResponseWriter, code int, msg string, details ...map[string]string) {
	body := map[string]any{"code": code, "message": msg}
	if len(details) > 0 {
		body["details"] = details
	}
	writeJSON(w, code, map[string]any{"error": body})
}

func itoa(i int) string { return strconv.Itoa(i) }

// unquote strips the optional quotes around a filter value.
func unquote(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}
