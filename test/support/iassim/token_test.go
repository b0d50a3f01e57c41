package iassim

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestTokenForWorkingSecretsOnly sends client credentials grants the way a
// runtime's credentials are used and checks that only an existing, unexpired
// secret of the client gets a token.
func TestTokenForWorkingSecretsOnly(t *testing.T) {
	srv := New(Options{RateLimit: -1})
	sim, err := srv.Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	past, future := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	id := srv.AddApp(App{Name: "rt", ClientID: "client-rt", Type: "charged", Secrets: []Secret{
		{ID: "s1", Value: "working"}, {ID: "s2", Value: "expiring", ValidTo: &future}, {ID: "s3", Value: "expired", ValidTo: &past}}})
	srv.AddApp(App{Name: "other", ClientID: "client-other", Type: "charged", Secrets: []Secret{{ID: "o1", Value: "others"}}})

	grant := func(basic bool, clientID, secret, grantType string) int {
		t.Helper()
		form := url.Values{"grant_type": {grantType}}
		if !basic {
			form.Set("client_id", clientID)
			form.Set("client_secret", secret)
		}
		req, _ := http.NewRequest(http.MethodPost, sim.URL+"/oauth2/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basic {
			req.SetBasicAuth(clientID, secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	cases := map[string]struct {
		basic                      bool
		clientID, secret, grantTyp string
		want                       int
	}{
		"a secret without expiry, Basic auth":      {true, "client-rt", "working", "client_credentials", http.StatusOK},
		"a secret without expiry, in the form":     {false, "client-rt", "working", "client_credentials", http.StatusOK},
		"a secret before its validTo":              {true, "client-rt", "expiring", "client_credentials", http.StatusOK},
		"a secret past its validTo":                {true, "client-rt", "expired", "client_credentials", http.StatusUnauthorized},
		"a wrong secret":                           {true, "client-rt", "wrong", "client_credentials", http.StatusUnauthorized},
		"another app's secret with this client ID": {true, "client-rt", "others", "client_credentials", http.StatusUnauthorized},
		"no credentials":                           {false, "", "", "client_credentials", http.StatusUnauthorized},
		"another grant":                            {true, "client-rt", "working", "password", http.StatusBadRequest},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := grant(tc.basic, tc.clientID, tc.secret, tc.grantTyp); got != tc.want {
				t.Errorf("token request answered %d, want %d", got, tc.want)
			}
		})
	}
	srv.MutateApp(id, func(a *App) { a.Secrets = a.Secrets[1:] })
	if got := grant(true, "client-rt", "working", "client_credentials"); got != http.StatusUnauthorized {
		t.Errorf("a deleted secret: token request answered %d, want 401", got)
	}
}
