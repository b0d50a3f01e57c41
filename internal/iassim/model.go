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
	// ClientID is assigned at creation and shown once a secret exists, as in IAS.
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
	authn := map[string]any{"ssoType": a.SSOType}
	if len(a.Secrets) > 0 {
		authn["clientID"] = a.ClientID
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
		"branding":  map[string]any{"displayName": a.DisplayName},
		schemaAuthn: authn,
	}
	if a.GlobalAccount != "" {
		out["globalAccount"] = a.GlobalAccount
	}
	if a.Description != "" {
		out["description"] = a.Description
	}
	return out
}

func (s *Secret) json(withValue bool, clientID string) map[string]any {
	out := map[string]any{
		"id":                  s.ID,
		"hint":                s.Hint,
		"description":         s.Description,
		"authorizationScopes": s.AuthorizationScopes,
		"clientId":            clientID,
		"allApisAccess":       false,
		"apiNames":            []string{},
	}
	if s.ValidTo != nil {
		out["validTo"] = s.ValidTo.UTC().Format(time.RFC3339)
	}
	if withValue {
		out["secret"] = s.Value
	}
	return out
}

func (a *App) clone() App {
	c := *a
	c.Secrets = append([]Secret(nil), a.Secrets...)
	return c
}
