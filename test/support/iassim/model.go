package iassim

import (
	"time"
)

// Schema URNs as the service uses them.
const (
	schemaAuthn = "urn:sap:identity:application:schemas:extension:sci:1.0:Authentication"
	schemaCore  = "urn:sap:identity:application:schemas:core:1.0"
)

// App is an application as the simulator stores it.
type App struct {
	ID            string
	Name          string
	DisplayName   string
	Description   string
	GlobalAccount string
	SSOType       string
	// ClientID is assigned at creation and shown from then on, as in IAS.
	ClientID string
	// Type is meta.type: "charged" for customer-created apps, else "bundled"/"system".
	Type    string
	Created time.Time
	Secrets []Secret
}

// Secret is an api secret of an App. Value is what IAS returned once at creation.
type Secret struct {
	ID                  string
	Hint                string
	Value               string
	Description         string
	AuthorizationScopes []string
	ValidTo             *time.Time
}

func (a *App) json(base string) map[string]any {
	// "clientId" with a lower-case d, from creation on, as every recorded answer.
	authn := map[string]any{"ssoType": a.SSOType, "clientId": a.ClientID}
	// globalAccount is always there, "unknown" when none was given.
	ga := a.GlobalAccount
	if ga == "" {
		ga = "unknown"
	}
	out := map[string]any{
		"id":      a.ID,
		"name":    a.Name,
		"schemas": []string{schemaCore, schemaAuthn},
		"meta": map[string]any{
			"type":         a.Type,
			"created":      a.Created.UTC().Format(time.RFC3339),
			"lastModified": a.Created.UTC().Format(time.RFC3339),
			"location":     base + "/Applications/v1/" + a.ID,
		},
		"branding":      map[string]any{"displayName": a.DisplayName},
		"globalAccount": ga,
		schemaAuthn:     authn,
	}
	if a.Description != "" {
		out["description"] = a.Description
	}
	return out
}

// json is the secret as listed; created adds what only the create answer
// carries: the value and the client ID. Neither carries apiNames while
// allApisAccess is false (recorded: resource_application_secret.yaml,
// datasource_application_secrets.yaml).
func (s *Secret) json(created bool, clientID string) map[string]any {
	out := map[string]any{
		"id":                  s.ID,
		"hint":                s.Hint,
		"description":         s.Description,
		"authorizationScopes": s.AuthorizationScopes,
		"allApisAccess":       false,
	}
	if s.ValidTo != nil {
		out["validTo"] = s.ValidTo.UTC().Format(time.RFC3339)
	}
	if created {
		out["secret"] = s.Value
		out["clientId"] = clientID
	}
	return out
}

func (a *App) clone() App {
	c := *a
	c.Secrets = append([]Secret(nil), a.Secrets...)
	return c
}
