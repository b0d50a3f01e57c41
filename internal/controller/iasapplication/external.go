package iasapplication

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// Event reasons of this controller, beyond crossplane-runtime's.
const (
	reasonAdopted       event.Reason = "AdoptedExternalResource"
	reasonNewSecret     event.Reason = "PublishedNewClientSecret"
	reasonDeletedSecret event.Reason = "DeletedStaleClientSecret"
)

type connector struct {
	kube      client.Client
	reader    client.Reader
	usage     resource.ModernTracker
	pool      *ias.Pool
	recorder  event.Recorder
	publisher managed.LocalConnectionPublisher
}

func (c *connector) Connect(ctx context.Context, cr *v1alpha1.IASApplication) (managed.TypedExternalClient[*v1alpha1.IASApplication], error) {
	if err := c.usage.Track(ctx, cr); err != nil {
		return nil, fmt.Errorf("cannot track ProviderConfig usage: %w", err)
	}
	cfg, err := ias.ConfigFor(ctx, c.kube, cr)
	if err != nil {
		return nil, err
	}
	cl, err := c.pool.Client(cfg.Tenant)
	if err != nil {
		return nil, err
	}
	return &external{ias: cl, kube: c.kube, reader: c.reader, globalAccount: cfg.GlobalAccount, recorder: c.recorder, publisher: c.publisher, now: time.Now}, nil
}

// external reconciles one IASApplication with its IAS tenant.
type external struct {
	ias           ias.Client
	kube          client.Client
	reader        client.Reader // uncached
	globalAccount string
	recorder      event.Recorder
	publisher     managed.LocalConnectionPublisher
	now           func() time.Time
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.IASApplication) (managed.ExternalObservation, error) {
	app, adopted, err := e.find(ctx, cr)
	if err != nil || app == nil {
		return managed.ExternalObservation{}, err
	}
	if app.Type != ias.TypeCharged {
		return managed.ExternalObservation{}, fmt.Errorf("IAS application %s (%q) is of type %q, not a customer-created (charged) application; the provider never manages it", app.ID, app.Name, app.Type)
	}
	if adopted {
		meta.SetExternalName(cr, app.ID)
		e.recorder.Event(cr, event.Normal(reasonAdopted, fmt.Sprintf("Adopted the existing IAS application %s named %q", app.ID, app.Name)))
	}
	endpoints, err := e.ias.Endpoints(ctx)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	at := &cr.Status.AtProvider
	at.ID, at.ClientID, at.TokenURL, at.CertsURL = app.ID, app.ClientID, endpoints.TokenURL, endpoints.CertsURL

	secrets, err := e.ias.ListAPISecrets(ctx, app.ID)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	cur, value, problem, err := e.published(ctx, cr, app, secrets)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	at.SecretID, at.SecretHint, at.SecretValidTo = "", "", nil
	if cur != nil {
		at.SecretID, at.SecretHint = cur.ID, cur.Hint
		if cur.ValidTo != nil {
			at.SecretValidTo = &metav1.Time{Time: *cur.ValidTo}
		}
	}
	if problem != "" && mayPublish(cr) {
		cr.SetConditions(xpv2.Unavailable().WithMessage(problem))
	} else {
		cr.SetConditions(xpv2.Available())
	}
	obs := managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        problem == "" && len(drift(cr, app)) == 0 && len(stale(cr, secrets, cur)) == 0,
		ResourceLateInitialized: adopted,
	}
	if value != "" {
		obs.ConnectionDetails = details(app.ClientID, value, endpoints)
	}
	return obs, nil
}

// find returns the app by its UUID or, when the UUID is unknown or gone, by name;
// adopted tells that the UUID is newly learned.
func (e *external) find(ctx context.Context, cr *v1alpha1.IASApplication) (*ias.Application, bool, error) {
	if meta.GetExternalName(cr) == "" {
		// The cache may lag behind our own Create; the API server knows better.
		fresh := &v1alpha1.IASApplication{}
		if err := e.reader.Get(ctx, client.ObjectKeyFromObject(cr), fresh); err == nil && meta.GetExternalName(fresh) != "" {
			meta.SetExternalName(cr, meta.GetExternalName(fresh))
		}
	}
	if id := meta.GetExternalName(cr); id != "" {
		app, err := e.ias.GetApplication(ctx, id)
		switch {
		case err == nil:
			return app, false, nil
		case !ias.IsNotFound(err):
			return nil, false, err
		case meta.WasDeleted(cr):
			// Gone while deleting: never look for a namesake to delete instead.
			return nil, false, nil
		}
	}
	apps, err := e.ias.FindApplications(ctx, cr.AppName())
	if err != nil {
		return nil, false, err
	}
	switch len(apps) {
	case 0:
		return nil, false, nil
	case 1:
		if meta.WasDeleted(cr) {
			return nil, false, nil
		}
		return &apps[0], true, nil
	}
	ids := make([]string, 0, len(apps))
	for _, a := range apps {
		ids = append(ids, a.ID)
	}
	return nil, false, fmt.Errorf("found %d IAS applications named %q (%s); expected at most one. None was changed or deleted: remove the extra ones in IAS", len(apps), cr.AppName(), strings.Join(ids, ", "))
}

// published finds the api secret this provider published for the app: the one of
// its (description-marked) secrets whose hint begins the value in the connection
// Secret. It is derived from IAS and the connection Secret on every call, so
// nothing depends on bookkeeping that a lost status write could drop. problem says
// why there is no usable secret; value is the published secret, when one is.
func (e *external) published(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application, secrets []ias.APISecret) (*ias.APISecret, string, string, error) {
	var marked []ias.APISecret
	for _, s := range secrets {
		if s.Description == description(cr) {
			marked = append(marked, s)
		}
	}
	var cur *ias.APISecret
	var value string
	if ref := cr.GetWriteConnectionSecretToReference(); ref == nil {
		// Nothing to check against: the newest of ours is the current one.
		if len(marked) == 0 {
			return nil, "", "no client secret has been created for this application yet", nil
		}
		cur = &marked[len(marked)-1]
	} else {
		s := &corev1.Secret{}
		if err := e.kube.Get(ctx, types.NamespacedName{Namespace: cr.GetNamespace(), Name: ref.Name}, s); err != nil {
			if kerrors.IsNotFound(err) {
				return nil, "", fmt.Sprintf("connection Secret %s does not exist yet or was deleted; a new client secret is needed", ref.Name), nil
			}
			return nil, "", "", fmt.Errorf("cannot get connection Secret %s: %w", ref.Name, err)
		}
		value = string(s.Data[v1alpha1.KeyClientSecret])
		for i := range marked {
			if marked[i].Hint != "" && strings.HasPrefix(value, marked[i].Hint) && (marked[i].ClientID == "" || marked[i].ClientID == app.ClientID) {
				cur = &marked[i]
			}
		}
		if cur == nil {
			return nil, "", fmt.Sprintf("connection Secret %s holds no client secret that exists in IAS for application %s; a new one is needed", ref.Name, app.ID), nil
		}
	}
	if rb := cr.Spec.ForProvider.Secret.RotateBefore; rb != nil && cur.ValidTo != nil && e.now().Add(rb.Duration).After(*cur.ValidTo) {
		return cur, value, fmt.Sprintf("client secret %s… expires at %s, within rotateBefore; rotating", cur.Hint, cur.ValidTo.UTC().Format(time.RFC3339)), nil
	}
	return cur, value, "", nil
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.IASApplication) (managed.ExternalCreation, error) {
	ga := cr.Spec.ForProvider.GlobalAccount
	if ga == "" {
		ga = e.globalAccount
	}
	id, err := e.ias.CreateApplication(ctx, ias.ApplicationSpec{Name: cr.AppName(), DisplayName: cr.AppDisplayName(), GlobalAccount: ga})
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	// Recorded even if what follows fails: the next Observe finds the app by it.
	meta.SetExternalName(cr, id)
	app := &ias.Application{ID: id, Name: cr.AppName()}
	endpoints, err := e.ias.Endpoints(ctx)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	cd, err := e.newSecret(ctx, cr, app, endpoints)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	return managed.ExternalCreation{ConnectionDetails: cd}, nil
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.IASApplication) (managed.ExternalUpdate, error) {
	id := meta.GetExternalName(cr)
	app, err := e.ias.GetApplication(ctx, id)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	if p := drift(cr, app); len(p) > 0 {
		if err := e.ias.PatchApplication(ctx, id, p); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	secrets, err := e.ias.ListAPISecrets(ctx, id)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	cur, _, problem, err := e.published(ctx, cr, app, secrets)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	var cd managed.ConnectionDetails
	if problem != "" {
		// Every secret of ours listed above is now older than the new one.
		cur = nil
		endpoints, err := e.ias.Endpoints(ctx)
		if err != nil {
			return managed.ExternalUpdate{}, err
		}
		if cd, err = e.newSecret(ctx, cr, app, endpoints); err != nil {
			return managed.ExternalUpdate{}, err
		}
		// Publish before removing the older secrets, so that a runtime never holds
		// a secret that is already deleted while its successor is not yet out.
		if _, err := e.publisher.PublishConnection(ctx, cr, cd); err != nil {
			return managed.ExternalUpdate{}, fmt.Errorf("cannot publish the new client secret: %w", err)
		}
	}
	for _, s := range stale(cr, secrets, cur) {
		if err := e.ias.DeleteAPISecret(ctx, id, s.ID); err != nil && !ias.IsNotFound(err) {
			return managed.ExternalUpdate{ConnectionDetails: cd}, err
		}
		e.recorder.Event(cr, event.Normal(reasonDeletedSecret, fmt.Sprintf("Deleted the older client secret %s… (id %s) that this provider created", s.Hint, s.ID)))
	}
	return managed.ExternalUpdate{ConnectionDetails: cd}, nil
}

func (e *external) Delete(ctx context.Context, cr *v1alpha1.IASApplication) (managed.ExternalDelete, error) {
	id := meta.GetExternalName(cr)
	if id == "" {
		return managed.ExternalDelete{}, nil
	}
	if err := e.ias.DeleteApplication(ctx, id); err != nil && !ias.IsNotFound(err) {
		return managed.ExternalDelete{}, err
	}
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }

// newSecret creates an api secret and records it in the status.
func (e *external) newSecret(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application, endpoints ias.Endpoints) (managed.ConnectionDetails, error) {
	p := cr.Spec.ForProvider.Secret
	spec := ias.SecretSpec{Description: description(cr), AuthorizationScopes: p.AuthorizationScopes}
	if len(spec.AuthorizationScopes) == 0 {
		spec.AuthorizationScopes = []string{"oAuth"}
	}
	if p.ValidFor != nil && p.ValidFor.Duration > 0 {
		t := e.now().Add(p.ValidFor.Duration).UTC().Truncate(time.Second)
		spec.ValidTo = &t
	}
	s, err := e.ias.CreateAPISecret(ctx, app.ID, spec)
	if err != nil {
		return nil, err
	}
	at := &cr.Status.AtProvider
	at.ID, at.ClientID, at.TokenURL, at.CertsURL = app.ID, s.ClientID, endpoints.TokenURL, endpoints.CertsURL
	at.SecretID, at.SecretHint = s.ID, s.Hint
	at.SecretValidTo = nil
	if s.ValidTo != nil {
		at.SecretValidTo = &metav1.Time{Time: *s.ValidTo}
	}
	e.recorder.Event(cr, event.Normal(reasonNewSecret, fmt.Sprintf("Created client secret %s… for IAS application %s and published it", s.Hint, app.ID)))
	return details(s.ClientID, s.Value, endpoints), nil
}

// mayPublish tells whether the management policies let the provider create and
// publish a client secret; an observe-only resource is Ready once the app exists.
func mayPublish(cr *v1alpha1.IASApplication) bool {
	for _, p := range cr.GetManagementPolicies() {
		if p == xpv2.ManagementActionAll || p == xpv2.ManagementActionUpdate {
			return true
		}
	}
	return len(cr.GetManagementPolicies()) == 0
}

func details(clientID, secret string, e ias.Endpoints) managed.ConnectionDetails {
	return managed.ConnectionDetails{
		v1alpha1.KeyClientID:     []byte(clientID),
		v1alpha1.KeyClientSecret: []byte(secret),
		v1alpha1.KeyTokenURL:     []byte(e.TokenURL),
		v1alpha1.KeyCertsURL:     []byte(e.CertsURL),
	}
}

func description(cr *v1alpha1.IASApplication) string {
	if d := cr.Spec.ForProvider.Secret.Description; d != "" {
		return d
	}
	return v1alpha1.DefaultSecretDescription
}

// drift lists the patches that bring the app in IAS back to the spec.
func drift(cr *v1alpha1.IASApplication, app *ias.Application) []ias.Patch {
	var p []ias.Patch
	if app.Name != cr.AppName() {
		p = append(p, ias.Patch{Path: ias.PathName, Value: cr.AppName()})
	}
	if app.DisplayName != cr.AppDisplayName() {
		p = append(p, ias.Patch{Path: ias.PathDisplayName, Value: cr.AppDisplayName()})
	}
	if app.SSOType != ias.SSOTypeOIDC {
		p = append(p, ias.Patch{Path: ias.PathSSOType, Value: ias.SSOTypeOIDC})
	}
	return p
}

// stale lists this provider's secrets other than the published one cur; with cur
// nil, all of them (the caller has just published a newer one).
func stale(cr *v1alpha1.IASApplication, secrets []ias.APISecret, cur *ias.APISecret) []ias.APISecret {
	var out []ias.APISecret
	for _, s := range secrets {
		if (cur == nil || s.ID != cur.ID) && s.Description == description(cr) {
			out = append(out, s)
		}
	}
	return out
}
