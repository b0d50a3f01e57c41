package iassim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Recorded is where the facts below were read: the go-vcr cassettes of real
// IAS traffic in SAP/terraform-provider-sap-cloud-identity-services
// (sci/provider/fixtures, commit 8d2d5cfaa0028d60b0bb0b6d75b335cd83d3df30).
// Each case names its cassette.

// TestAnswersInRecordedShapes sends the simulator the requests the cassettes
// hold and checks its answers have the recorded status, content type and keys.
func TestAnswersInRecordedShapes(t *testing.T) {
	sim, err := New(Options{RateLimit: -1}).Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	call := func(method, path, body string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, sim.URL+path, strings.NewReader(body))
		req.SetBasicAuth("admin", "admin-password")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if len(b) > 0 {
			_ = json.Unmarshal(b, &out)
		}
		return resp, out
	}
	// resource_application.yaml: POST answers 201, no body, relative Location.
	resp, body := call(http.MethodPost, "/Applications/v1/", `{"name":"recorded","branding":{"displayName":"recorded"},"schemas":["urn:sap:identity:application:schemas:extension:sci:1.0:Authentication"],"urn:sap:identity:application:schemas:extension:sci:1.0:Authentication":{"ssoType":"openIdConnect"}}`)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusCreated || body != nil || !strings.HasPrefix(loc, "/Applications/v1/") {
		t.Fatalf("create: %d, body %v, Location %q", resp.StatusCode, body, loc)
	}
	id := strings.TrimPrefix(loc, "/Applications/v1/")
	authn := "urn:sap:identity:application:schemas:extension:sci:1.0:Authentication"

	cases := map[string]struct {
		method, path, body string
		status             int
		check              func(t *testing.T, body map[string]any)
	}{
		// resource_application.yaml (every recorded GET): clientId with a lower-case d,
		// from creation on, before any secret; globalAccount "unknown" when none was given.
		"get app": {http.MethodGet, "/Applications/v1/" + id, "", http.StatusOK, func(t *testing.T, b map[string]any) {
			a, _ := b[authn].(map[string]any)
			if _, ok := a["clientId"].(string); !ok || a["clientID"] != nil {
				t.Errorf("the app's client ID is not at %s.clientId: %v", authn, a)
			}
			if b["globalAccount"] != "unknown" {
				t.Errorf("globalAccount = %v, want \"unknown\"", b["globalAccount"])
			}
		}},
		// resource_application_secret.yaml: the create answer carries clientId and
		// allApisAccess false, and no apiNames.
		"create api secret": {http.MethodPost, "/Applications/v1/" + id + "/apiSecrets", `{"authorizationScopes":["oAuth"],"description":"d"}`, http.StatusCreated, func(t *testing.T, b map[string]any) {
			for _, k := range []string{"id", "clientId", "secret", "hint", "authorizationScopes", "allApisAccess", "description"} {
				if _, ok := b[k]; !ok {
					t.Errorf("no %q in %v", k, keys(b))
				}
			}
			if _, ok := b["apiNames"]; ok {
				t.Errorf("apiNames while allApisAccess is false")
			}
		}},
		// datasource_application_secrets.yaml: listed secrets carry neither clientId nor apiNames.
		"list api secrets": {http.MethodGet, "/Applications/v1/" + id + "/apiSecrets", "", http.StatusOK, func(t *testing.T, b map[string]any) {
			secrets, _ := b["secrets"].([]any)
			if len(secrets) != 1 {
				t.Fatalf("secrets: %v", b)
			}
			s, _ := secrets[0].(map[string]any)
			for _, k := range []string{"clientId", "apiNames", "secret"} {
				if _, ok := s[k]; ok {
					t.Errorf("a listed secret carries %q", k)
				}
			}
		}},
		// resource_application_secret_app_not_found.yaml: the 404 body.
		"app not found": {http.MethodPost, "/Applications/v1/00000000-0000-0000-0000-000000000000/apiSecrets", `{"authorizationScopes":["oAuth"]}`, http.StatusNotFound, func(t *testing.T, b map[string]any) {
			e, _ := b["error"].(map[string]any)
			if e["message"] != "Unable to find application with provided identifier." || e["code"] != float64(404) {
				t.Errorf("error body %v", b)
			}
		}},
	}
	for _, name := range []string{"get app", "create api secret", "list api secrets", "app not found"} {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			resp, body := call(tc.method, tc.path, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			// Every recorded answer.
			if ct := resp.Header.Get("Content-Type"); ct != "application/json;charset=UTF-8" {
				t.Errorf("Content-Type %q", ct)
			}
			tc.check(t, body)
		})
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
