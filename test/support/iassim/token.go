package iassim

import (
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// token answers the OAuth 2.0 client credentials grant at the tenant's
// token_endpoint, which is what a runtime's credentials are for: a client
// secret works while it exists in IAS and has not passed its validTo. The
// client authenticates with Basic auth (client_secret_basic) or in the form
// (client_secret_post); a wrong or expired secret gets 401 invalid_client
// (RFC 6749 sections 2.3.1, 4.4 and 5.2; SAP's IAS documentation, "Configure
// Client Credentials Flow", names both ways to send the secret).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if !s.ClientSecretWorks(id, secret) {
		w.Header().Set("WWW-Authenticate", `Basic realm="IAS"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": uuid.NewString(), "token_type": "Bearer", "expires_in": 3600})
}

// ClientSecretWorks tells whether IAS would issue a token for the client ID
// and secret now.
func (s *Server) ClientSecretWorks(clientID, secret string) bool {
	if clientID == "" || secret == "" {
		return false
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.apps {
		if a.ClientID != clientID {
			continue
		}
		for _, sec := range a.Secrets {
			if subtle.ConstantTimeCompare([]byte(sec.Value), []byte(secret)) == 1 && (sec.ValidTo == nil || now.Before(*sec.ValidTo)) {
				return true
			}
		}
	}
	return false
}
