package iassim

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

func (s *Server) listApps(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, http.StatusBadRequest, "Invalid user input.", map[string]string{"target": "limit", "message": "must be between 1 and 100"})
			return
		}
		limit = n
	}
	if s.endlessPage(w, q.Get("filter")) {
		return
	}
	match, ok := parseFilter(q.Get("filter"))
	if !ok {
		writeError(w, http.StatusBadRequest, "Invalid user input.", map[string]string{"target": "filter", "message": "unsupported filter"})
		return
	}

	base := s.base(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	var hits []*App
	visible := time.Now().Add(-s.listLag)
	for _, id := range s.order {
		if a := s.apps[id]; match(a) && !a.Created.After(visible) {
			hits = append(hits, a)
		}
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		start = -1
		if s.opts.OpaqueCursors {
			c = fromOpaque(c)
		}
		for i, a := range hits {
			if a.ID == c {
				start = i
				break
			}
		}
		if start < 0 {
			writeError(w, http.StatusBadRequest, "Invalid user input.", map[string]string{"target": "cursor", "message": "unknown cursor"})
			return
		}
	}
	if len(hits) == 0 && q.Get("filter") != "" && s.opts.EmptyFilter404 {
		writeError(w, http.StatusNotFound, "Unable to find applications")
		return
	}
	end := min(start+limit, len(hits))
	page := make([]map[string]any, 0, end-start)
	for _, a := range hits[start:end] {
		page = append(page, a.json(base))
	}
	body := map[string]any{"totalResults": len(hits), "itemsPerPage": len(page), "applications": page}
	if end < len(hits) {
		body["nextCursor"] = hits[end].ID
		if s.opts.OpaqueCursors {
			body["nextCursor"] = toOpaque(hits[end].ID)
		}
	}
	writeJSON(w, http.StatusOK, body)
}

// toOpaque makes a cursor that is no UUID from the app ID it points at.
func toOpaque(id string) string { return "pg~" + base64.RawURLEncoding.EncodeToString([]byte(id)) }

func fromOpaque(c string) string {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(c, "pg~"))
	if err != nil {
		return ""
	}
	return string(b)
}

// parseFilter understands "<attr> eq <value>" for the attributes IAS supports.
func parseFilter(f string) (func(*App) bool, bool) {
	if strings.TrimSpace(f) == "" {
		return func(*App) bool { return true }, true
	}
	parts := strings.SplitN(strings.TrimSpace(f), " ", 3)
	if len(parts) != 3 || parts[1] != "eq" {
		return nil, false
	}
	v := unquote(parts[2])
	switch parts[0] {
	case "name":
		return func(a *App) bool { return a.Name == v }, true
	case "id":
		return func(a *App) bool { return a.ID == v }, true
	case "clientID":
		return func(a *App) bool { return a.ClientID == v }, true
	case "parentApplicationId":
		return func(*App) bool { return false }, true
	}
	return nil, false
}

type createAppBody struct {
	Name          string `json:"name"`
	Description   string `json:"description"`
	GlobalAccount string `json:"globalAccount"`
	Branding      *struct {
		DisplayName string `json:"displayName"`
	} `json:"branding"`
	Authn *struct {
		SSOType string `json:"ssoType"`
	} `json:"urn:sap:identity:application:schemas:extension:sci:1.0:Authentication"`
}

func (s *Server) createApp(w http.ResponseWriter, r *http.Request) {
	var b createAppBody
	if !decode(w, r, &b) {
		return
	}
	if b.Name == "" {
		writeError(w, http.StatusBadRequest, "Invalid user input.", map[string]string{"target": "name", "message": "must not be empty"})
		return
	}
	a := &App{ID: uuid.NewString(), Name: b.Name, Description: b.Description, GlobalAccount: b.GlobalAccount, SSOType: "saml2",
		ClientID: uuid.NewString(), Type: "charged", Created: time.Now()}
	if b.Branding != nil {
		a.DisplayName = b.Branding.DisplayName
	}
	if b.Authn != nil && b.Authn.SSOType != "" {
		a.SSOType = b.Authn.SSOType
	}
	s.mu.Lock()
	s.apps[a.ID] = a
	s.order = append(s.order, a.ID)
	failAfter := s.failAfterPost > 0
	if failAfter {
		s.failAfterPost--
	}
	s.mu.Unlock()
	if failAfter {
		writeError(w, http.StatusInternalServerError, "Internal server error")
		return
	}
	w.Header().Set("Location", "/Applications/v1/"+a.ID)
	w.WriteHeader(http.StatusCreated)
}

// withApp runs fn on the app named by the path under the lock, or answers 404.
func (s *Server) withApp(w http.ResponseWriter, r *http.Request, fn func(*App)) {
	id := r.PathValue("id")
	s.mu.Lock()
	a, ok := s.apps[id]
	if !ok {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "Unable to find application with provided identifier.")
		return
	}
	defer s.mu.Unlock()
	fn(a)
}

func (s *Server) getApp(w http.ResponseWriter, r *http.Request) {
	if s.oversizedBody(w, r, r.PathValue("id")) {
		return
	}
	base := s.base(r)
	s.withApp(w, r, func(a *App) { writeJSON(w, http.StatusOK, a.json(base)) })
}

type patchBody struct {
	Operations []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	} `json:"operations"`
}

func (s *Server) patchApp(w http.ResponseWriter, r *http.Request) {
	var b patchBody
	if !decode(w, r, &b) {
		return
	}
	s.withApp(w, r, func(a *App) {
		next := *a
		for _, op := range b.Operations {
			v, _ := op.Value.(string)
			if op.Op != "replace" && op.Op != "add" {
				writeError(w, http.StatusBadRequest, "Invalid user input.", map[string]string{"target": op.Path, "message": "unsupported op " + op.Op})
				return
			}
			switch op.Path {
			case "/name":
				next.Name = v
			case "/branding/displayName":
				next.DisplayName = v
			case "/description":
				next.Description = v
			case "/" + schemaAuthn + "/ssoType":
				next.SSOType = v
			case "/globalAccount":
				next.GlobalAccount = v
			default:
				writeError(w, http.StatusBadRequest, "Invalid user input.", map[string]string{"target": op.Path, "message": "unsupported path"})
				return
			}
		}
		*a = next
		w.WriteHeader(http.StatusOK)
	})
}

func (s *Server) putApp(w http.ResponseWriter, r *http.Request) {
	var b createAppBody
	if !decode(w, r, &b) {
		return
	}
	s.withApp(w, r, func(a *App) {
		a.Name, a.Description, a.GlobalAccount = b.Name, b.Description, b.GlobalAccount
		if b.Branding != nil {
			a.DisplayName = b.Branding.DisplayName
		}
		if b.Authn != nil && b.Authn.SSOType != "" {
			a.SSOType = b.Authn.SSOType
		}
		w.WriteHeader(http.StatusOK)
	})
}

func (s *Server) deleteApp(w http.ResponseWriter, r *http.Request) {
	s.withApp(w, r, func(a *App) {
		s.removeLocked(a.ID)
		w.WriteHeader(http.StatusOK)
	})
}

func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request) {
	s.withApp(w, r, func(a *App) {
		out := make([]map[string]any, 0, len(a.Secrets))
		for i := range a.Secrets {
			out = append(out, a.Secrets[i].json(false, a.ClientID))
		}
		writeJSON(w, http.StatusOK, map[string]any{"secrets": out})
	})
}

type createSecretBody struct {
	AuthorizationScopes []string   `json:"authorizationScopes"`
	Description         string     `json:"description"`
	ValidTo             *time.Time `json:"validTo"`
}

func (s *Server) createSecret(w http.ResponseWriter, r *http.Request) {
	var b createSecretBody
	if !decode(w, r, &b) {
		return
	}
	if b.ValidTo != nil && !b.ValidTo.After(time.Now()) {
		writeError(w, http.StatusBadRequest, "Invalid user input.", map[string]string{"target": "validTo", "message": "must be in the future"})
		return
	}
	s.withApp(w, r, func(a *App) {
		sec := Secret{ID: uuid.NewString(), Value: newSecretValue(), Description: b.Description,
			AuthorizationScopes: b.AuthorizationScopes, ValidTo: b.ValidTo}
		sec.Hint = sec.Value[:4]
		a.Secrets = append(a.Secrets, sec)
		writeJSON(w, http.StatusCreated, sec.json(true, a.ClientID))
	})
}

func (s *Server) deleteSecret(w http.ResponseWriter, r *http.Request) {
	id, hint := r.URL.Query().Get("id"), r.URL.Query().Get("hint")
	if id == "" && hint == "" {
		writeError(w, http.StatusBadRequest, "Invalid user input.", map[string]string{"target": "id", "message": "id or hint is required"})
		return
	}
	s.withApp(w, r, func(a *App) {
		for i, sec := range a.Secrets {
			if (id != "" && sec.ID == id) || (id == "" && sec.Hint == hint) {
				a.Secrets = append(a.Secrets[:i], a.Secrets[i+1:]...)
				w.WriteHeader(http.StatusOK)
				return
			}
		}
		writeError(w, http.StatusNotFound, "Unable to find secret")
	})
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "Content type must be application/json")
		return false
	}
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid user input.", map[string]string{"message": "malformed JSON"})
		return false
	}
	return true
}

func newSecretValue() string {
	b := make([]byte, 27)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
