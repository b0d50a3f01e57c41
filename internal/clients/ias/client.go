// Package ias is the provider's client of the SAP Cloud Identity Services
// Application Directory API: the generated client (package api) behind a small
// interface, with a token bucket per tenant, Retry-After, retries, timeouts,
// metrics and a cache of the tenant's well-known endpoints.
package ias

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/uuid"
	"golang.org/x/time/rate"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/api"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
)

// SSOTypeOIDC is the single sign-on type of the applications this provider makes.
const SSOTypeOIDC = "openIdConnect"

// TypeCharged is meta.type of customer-created applications, the only ones this
// provider adopts, changes or deletes.
const TypeCharged = "charged"

// AppMarker is the description this provider gives the applications it creates.
// It tells them from namesakes made by anyone else: only an application carrying
// it is ever deleted as a duplicate.
const AppMarker = "Managed by provider-eventing-auth"

// Application is an IAS application as the provider sees it.
type Application struct {
	ID            string
	Name          string
	DisplayName   string
	Description   string
	GlobalAccount string
	SSOType       string
	// Created is meta.created; zero if IAS did not say.
	Created time.Time
	// ClientID is the app's client ID, set from its creation on.
	ClientID string
	// Type is meta.type: "charged" for customer-created applications.
	Type string
}

// ApplicationSpec is what the provider creates.
type ApplicationSpec struct {
	Name          string
	DisplayName   string
	Description   string
	GlobalAccount string
}

// SecretSpec is the api secret the provider creates.
type SecretSpec struct {
	Description         string
	AuthorizationScopes []string
	ValidTo             *time.Time
}

// APISecret is an api secret. Value and ClientID are set only in the answer to
// its creation.
type APISecret struct {
	ID          string
	ClientID    string
	Hint        string
	Description string
	ValidTo     *time.Time
	Value       string
}

// Endpoints are the tenant's OAuth endpoints from its well-known document.
type Endpoints struct {
	TokenURL string
	CertsURL string
	// Issuer is the document's issuer; the eventing manager on each runtime
	// derives it from CertsURL (see CertsURLFitsIssuer).
	Issuer string
}

// CertsURLFitsIssuer tells whether CertsURL is <Issuer>/oauth2/certs. Kyma's
// eventing manager derives the JWT issuer of its APIRules by cutting
// /oauth2/certs off certs_url (kyma-project/eventing-manager,
// pkg/object/apirule.go); any other form makes every webhook call fail on
// the runtime without an error anywhere.
func (e Endpoints) CertsURLFitsIssuer() bool {
	return e.CertsURL == strings.TrimSuffix(e.Issuer, "/")+"/oauth2/certs"
}

// A Patch sets one attribute of an application (a JSON pointer path).
type Patch struct {
	Path  string
	Value string
}

// Patch paths the provider keeps in line.
const (
	PathName        = "/name"
	PathDisplayName = "/branding/displayName"
	PathDescription = "/description"
	PathSSOType     = "/urn:sap:identity:application:schemas:extension:sci:1.0:Authentication/ssoType"
)

// Client calls one IAS tenant: its applications, their api secrets and its
// well-known endpoints.
type Client interface {
	FindApplications(ctx context.Context, name string) ([]Application, error)
	// ListApplications hands every application of the tenant to eachPage, a
	// page at a time, as IAS pages them out.
	ListApplications(ctx context.Context, eachPage func([]Application)) error
	GetApplication(ctx context.Context, id string) (*Application, error)
	CreateApplication(ctx context.Context, spec ApplicationSpec) (string, error)
	PatchApplication(ctx context.Context, id string, patches []Patch) error
	DeleteApplication(ctx context.Context, id string) error
	CreateAPISecret(ctx context.Context, appID string, spec SecretSpec) (*APISecret, error)
	ListAPISecrets(ctx context.Context, appID string) ([]APISecret, error)
	DeleteAPISecret(ctx context.Context, appID, secretID string) error
	Endpoints(ctx context.Context) (Endpoints, error)
	// Generation names the state the client shares with every client of the
	// same tenant URL, credentials and CA: a Pool gives each such combination a
	// number of its own, so what is learnt with it (listings) is kept apart
	// from what other credentials learn.
	Generation() uint64
}

type client struct {
	// own is the ProviderConfig's rate, within the tenant's budget.
	own    *rate.Limiter
	tenant Tenant
	state  *tenantState
	http   *http.Client
	api    *api.ClientWithResponses
}

// newClient returns a client of the tenant's state; the caller holds st.mu.
func newClient(t Tenant, st *tenantState) (*client, error) {
	auth := func(_ context.Context, req *http.Request) error {
		// With a client certificate the TLS handshake is the logon.
		if t.ClientCert == nil {
			req.SetBasicAuth(t.Username, t.Password)
		}
		req.Header.Set("Accept", "application/json")
		return nil
	}
	c, err := api.NewClientWithResponses(strings.TrimSuffix(t.URL, "/")+"/Applications/v1/",
		api.WithHTTPClient(st.http), api.WithRequestEditorFn(auth))
	if err != nil {
		return nil, err
	}
	return &client{tenant: t, state: st, http: st.http, api: c, own: st.limiter(t)}, nil
}

func (c *client) Generation() uint64 { return c.state.generation }

func parseID(op, id string) (uuid.UUID, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return u, fmt.Errorf("IAS %s: %q is not an application UUID", op, id)
	}
	return u, nil
}

func (c *client) FindApplications(ctx context.Context, name string) ([]Application, error) {
	if !ValidAppName(name) {
		return nil, fmt.Errorf("IAS %s: application name %q cannot be looked up: a name holds letters, digits, '.', '_', ':' and '-', at most 247", operation.ListApplications, name)
	}
	// Only apps of the name, each once: a tenant that pads its pages with
	// other apps, or repeats them, costs a lookup no memory.
	var out []Application
	seen := map[string]bool{}
	if _, err := c.eachApplicationPage(ctx, "name eq "+name, func(page []Application) {
		for _, a := range page {
			if a.Name == name && !seen[a.ID] {
				seen[a.ID] = true
				out = append(out, a)
			}
		}
	}); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *client) ListApplications(ctx context.Context, eachPage func([]Application)) error {
	apps, err := c.eachApplicationPage(ctx, "", eachPage)
	if err == nil {
		c.state.listedApps.Store(apps)
	}
	return err
}

// eachApplicationPage pages through the apps the filter selects, an empty
// filter all of them, hands each page to fn as it comes, and returns how many
// distinct apps it read. A listing that does not end, or grows past what a
// tenant can hold (listingBounds), stops with a PageLimitError.
func (c *client) eachApplicationPage(ctx context.Context, filter string, fn func([]Application)) (int64, error) {
	ctx = c.withOperation(ctx, operation.ListApplications)
	limit := int32(pageSize)
	params := &api.GetAllApplicationsParams{Limit: &limit}
	if filter != "" {
		params.Filter = &filter
	}
	l := newListingBounds(maxPages(c.state.listedApps.Load(), c.state.maxPages))
	stop := func(pages int, reason string) error {
		if filter == "" && l.full(pages) {
			// Stopped at the page limit, not for a loop or padding: the
			// tenant holds at least the distinct apps read.
			c.state.raiseListed(l.distinct())
		}
		return &PageLimitError{Tenant: c.tenant.URL, Filter: filter, Pages: pages, Reason: reason}
	}
	for pages := 1; ; pages++ {
		resp, err := c.api.GetAllApplicationsWithResponse(ctx, params)
		if err != nil {
			return 0, callFailed(err, operation.ListApplications)
		}
		switch {
		case resp.StatusCode() == http.StatusNotFound && filter != "":
			// Some tenants answer an empty filtered list with 404.
			return 0, nil
		case resp.JSON200 == nil:
			return 0, apiError(operation.ListApplications, resp.HTTPResponse, resp.Body)
		}
		if reason := l.read(len(resp.Body)); reason != "" {
			return 0, stop(pages, reason)
		}
		if resp.JSON200.Applications != nil {
			page := make([]Application, 0, len(*resp.JSON200.Applications))
			for _, a := range *resp.JSON200.Applications {
				app := fromAPI(a)
				l.app(app.ID)
				page = append(page, app)
			}
			fn(page)
		}
		// Only nextCursor ends the paging (a recorded page said totalResults 22
		// with 21 items and no nextCursor); a cursor is opaque and goes back as sent.
		next := deref(resp.JSON200.NextCursor)
		if next == "" {
			return l.distinct(), nil
		}
		if reason := l.next(next, pages); reason != "" {
			return 0, stop(pages, reason)
		}
		params.Cursor = &next
	}
}

func (c *client) GetApplication(ctx context.Context, id string) (*Application, error) {
	ctx = c.withOperation(ctx, operation.GetApplication)
	u, err := parseID(operation.GetApplication, id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.GetApplicationWithResponse(ctx, u, &api.GetApplicationParams{})
	if err != nil {
		return nil, callFailed(err, operation.GetApplication)
	}
	if resp.JSON200 == nil {
		return nil, apiError(operation.GetApplication, resp.HTTPResponse, resp.Body)
	}
	a := fromAPI(*resp.JSON200)
	return &a, nil
}

func (c *client) CreateApplication(ctx context.Context, s ApplicationSpec) (string, error) {
	ctx = c.withOperation(ctx, operation.CreateApplication)
	ssoType := api.OpenIdConnect
	body := api.Application{
		Name:     &s.Name,
		Branding: &api.Branding{DisplayName: &s.DisplayName},
		Schemas:  &[]api.SchemasEnum{api.SchemasEnumUrnSapIdentityApplicationSchemasExtensionSci10Authentication},
		UrnSapIdentityApplicationSchemasExtensionSci10Authentication: &api.AuthenticationSchema{SsoType: &ssoType},
	}
	// Sent empty too, as eventing-auth-manager sends its --ias-global-account-id
	// unset: the same input makes the same app.
	body.GlobalAccount = &s.GlobalAccount
	if s.Description != "" {
		body.Description = &s.Description
	}
	resp, err := c.api.CreateApplicationWithResponse(ctx, &api.CreateApplicationParams{}, body)
	if err != nil {
		return "", callFailed(err, operation.CreateApplication)
	}
	if resp.StatusCode() != http.StatusCreated {
		return "", apiError(operation.CreateApplication, resp.HTTPResponse, resp.Body)
	}
	// Location is relative: /Applications/v1/<uuid>.
	loc := resp.HTTPResponse.Header.Get("Location")
	id := path.Base(strings.TrimSuffix(loc, "/"))
	if _, err := uuid.Parse(id); err != nil {
		return "", fmt.Errorf("IAS %s: answer has no application UUID in Location %q", operation.CreateApplication, loc)
	}
	return id, nil
}

func (c *client) PatchApplication(ctx context.Context, id string, patches []Patch) error {
	ctx = c.withOperation(ctx, operation.PatchApplication)
	u, err := parseID(operation.PatchApplication, id)
	if err != nil {
		return err
	}
	ops := make([]api.PatchOperation, 0, len(patches))
	for _, p := range patches {
		var v api.PatchOperationValue = p.Value
		ops = append(ops, api.PatchOperation{Op: api.Replace, Path: p.Path, Value: &v})
	}
	resp, err := c.api.PatchApplicationWithResponse(ctx, u, &api.PatchApplicationParams{}, api.ApplicationPatch{Operations: ops})
	if err != nil {
		return callFailed(err, operation.PatchApplication)
	}
	if resp.StatusCode() != http.StatusOK && resp.StatusCode() != http.StatusNoContent {
		return apiError(operation.PatchApplication, resp.HTTPResponse, resp.Body)
	}
	return nil
}

func (c *client) DeleteApplication(ctx context.Context, id string) error {
	ctx = c.withOperation(ctx, operation.DeleteApplication)
	u, err := parseID(operation.DeleteApplication, id)
	if err != nil {
		return err
	}
	resp, err := c.api.DeleteApplicationWithResponse(ctx, u)
	if err != nil {
		return callFailed(err, operation.DeleteApplication)
	}
	if resp.StatusCode() != http.StatusOK && resp.StatusCode() != http.StatusNoContent {
		return apiError(operation.DeleteApplication, resp.HTTPResponse, resp.Body)
	}
	return nil
}

func (c *client) CreateAPISecret(ctx context.Context, appID string, s SecretSpec) (*APISecret, error) {
	ctx = c.withOperation(ctx, operation.CreateAPISecret)
	u, err := parseID(operation.CreateAPISecret, appID)
	if err != nil {
		return nil, err
	}
	scopes := make([]api.AuthorizationScope, 0, len(s.AuthorizationScopes))
	for _, sc := range s.AuthorizationScopes {
		scopes = append(scopes, api.AuthorizationScope(sc))
	}
	resp, err := c.api.CreateApiSecretWithResponse(ctx, u, api.ApiSecretData{
		AuthorizationScopes: &scopes, Description: &s.Description, ValidTo: s.ValidTo,
	})
	if err != nil {
		return nil, callFailed(err, operation.CreateAPISecret)
	}
	if resp.JSON201 == nil {
		return nil, apiError(operation.CreateAPISecret, resp.HTTPResponse, resp.Body)
	}
	r := resp.JSON201
	if deref(r.Secret) == "" || deref(r.ClientId) == "" {
		return nil, fmt.Errorf("IAS %s: answer lacks the secret or client ID", operation.CreateAPISecret)
	}
	return &APISecret{ID: deref(r.Id), ClientID: deref(r.ClientId), Hint: deref(r.Hint),
		Description: deref(r.Description), ValidTo: r.ValidTo, Value: deref(r.Secret)}, nil
}

func (c *client) ListAPISecrets(ctx context.Context, appID string) ([]APISecret, error) {
	ctx = c.withOperation(ctx, operation.ListAPISecrets)
	u, err := parseID(operation.ListAPISecrets, appID)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.GetApiSecretsWithResponse(ctx, u)
	if err != nil {
		return nil, callFailed(err, operation.ListAPISecrets)
	}
	if resp.JSON200 == nil {
		return nil, apiError(operation.ListAPISecrets, resp.HTTPResponse, resp.Body)
	}
	var out []APISecret
	if resp.JSON200.Secrets != nil {
		for _, s := range *resp.JSON200.Secrets {
			// A listed secret carries no clientId: only the create answer does.
			out = append(out, APISecret{ID: deref(s.Id), Hint: deref(s.Hint), Description: deref(s.Description), ValidTo: s.ValidTo})
		}
	}
	return out, nil
}

func (c *client) DeleteAPISecret(ctx context.Context, appID, secretID string) error {
	ctx = c.withOperation(ctx, operation.DeleteAPISecret)
	u, err := parseID(operation.DeleteAPISecret, appID)
	if err != nil {
		return err
	}
	resp, err := c.api.DeleteApiSecretWithResponse(ctx, u, &api.DeleteApiSecretParams{Id: &secretID})
	if err != nil {
		return callFailed(err, operation.DeleteAPISecret)
	}
	if resp.StatusCode() != http.StatusOK && resp.StatusCode() != http.StatusNoContent {
		return apiError(operation.DeleteAPISecret, resp.HTTPResponse, resp.Body)
	}
	return nil
}

// Endpoints reads the tenant's well-known document once per tenant URL and
// credentials. Concurrent callers share one request.
func (c *client) Endpoints(ctx context.Context) (Endpoints, error) {
	c.state.mu.Lock()
	cached := c.state.endpoints
	c.state.mu.Unlock()
	if cached != nil {
		return *cached, nil
	}
	ctx = c.withOperation(ctx, operation.WellKnown)
	v, err, _ := c.state.wellKnown.Do(c.tenant.URL, func() (any, error) { return c.fetchEndpoints(ctx) })
	if err != nil {
		return Endpoints{}, err
	}
	return v.(Endpoints), nil //nolint:forcetypeassert // fetchEndpoints returns Endpoints.
}

func (c *client) fetchEndpoints(ctx context.Context) (Endpoints, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.tenant.URL, "/")+"/.well-known/openid-configuration", nil)
	if err != nil {
		return Endpoints{}, callFailed(err, operation.WellKnown)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return Endpoints{}, callFailed(err, operation.WellKnown)
	}
	defer resp.Body.Close() //nolint:errcheck // Read-only body.
	var doc struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
		JWKSURI       string `json:"jwks_uri"`
	}
	if resp.StatusCode != http.StatusOK {
		return Endpoints{}, &APIError{Operation: operation.WellKnown, StatusCode: resp.StatusCode}
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	if tooLarge := (*TooLargeError)(nil); errors.As(err, &tooLarge) {
		return Endpoints{}, tooLarge
	}
	if err != nil || doc.TokenEndpoint == "" || doc.JWKSURI == "" {
		return Endpoints{}, fmt.Errorf("IAS %s: the document lacks token_endpoint or jwks_uri", operation.WellKnown)
	}
	e := Endpoints{TokenURL: doc.TokenEndpoint, CertsURL: doc.JWKSURI, Issuer: doc.Issuer}
	c.state.mu.Lock()
	c.state.endpoints = &e
	c.state.mu.Unlock()
	return e, nil
}

func fromAPI(a api.ApplicationResponse) Application {
	out := Application{Name: deref(a.Name), Description: deref(a.Description), GlobalAccount: deref(a.GlobalAccount), Type: TypeCharged}
	if a.Id != nil {
		out.ID = a.Id.String()
	}
	if a.Branding != nil {
		out.DisplayName = deref(a.Branding.DisplayName)
	}
	if a.Meta != nil && a.Meta.Type != nil {
		out.Type = string(*a.Meta.Type)
	}
	if a.Meta != nil && a.Meta.Created != nil {
		out.Created = *a.Meta.Created
	}
	if au := a.UrnSapIdentityApplicationSchemasExtensionSci10Authentication; au != nil {
		out.ClientID = deref(au.ClientId)
		if au.SsoType != nil {
			out.SSOType = string(*au.SsoType)
		}
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
