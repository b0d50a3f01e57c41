package iasapplication

import (
	"context"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/tenantconfig"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
	"github.com/kyma-project/provider-eventing-auth/internal/secretmetrics"
)

// TypeCertsURL is the condition that says whether the tenant's certs URL is
// <issuer>/oauth2/certs, as the eventing manager on each runtime needs it.
const TypeCertsURL xpv2.ConditionType = "CertsURLFitsIssuer"

// shared is what the connector hands to every external client it makes.
type shared struct {
	kube      client.Client
	reader    client.Reader // uncached
	recorder  event.Recorder
	publisher managed.LocalConnectionPublisher
	users     Users
	created   *created
	deleted   *deleted
	checks    *secretChecks
	// listSettle is how long after a create without answer IAS's lists are
	// trusted to show the app, if it was made.
	listSettle time.Duration
	// inventoryAge is how old the tenant's app inventory may be (the poll);
	// 0: no inventory.
	inventoryAge time.Duration
	// secretCheck is how long the published secret is taken as the status
	// records it before IAS is asked again; 0: every poll.
	secretCheck time.Duration
	// secretMetrics counts rotations; nil counts nothing.
	secretMetrics *secretmetrics.Metrics
	// names claims app names before a create or a rename; nil claims none.
	names NameClaims
}

// TenantClients hands out IAS clients per tenant, each reading its tenant's
// inventory (inventory.Tenants).
type TenantClients interface {
	Client(ias.Tenant) (inventory.Client, error)
}

// TenantClientsFn is a TenantClients of a function.
type TenantClientsFn func(ias.Tenant) (inventory.Client, error)

// Client calls fn.
func (fn TenantClientsFn) Client(t ias.Tenant) (inventory.Client, error) { return fn(t) }

// Logons tells whether a tenant rejected the credentials and when, and
// recalls into the tenant's circuit a failure a condition recorded (ias.Pool).
type Logons interface {
	Rejected(ias.Tenant) (time.Time, bool)
	Recall(ias.Tenant, breaker.Failure)
}

// LogonsFn is a Logons of a function, without circuits to recall into.
type LogonsFn func(ias.Tenant) (time.Time, bool)

// Rejected calls fn.
func (fn LogonsFn) Rejected(t ias.Tenant) (time.Time, bool) { return fn(t) }

// Recall does nothing.
func (fn LogonsFn) Recall(ias.Tenant, breaker.Failure) {}

type connector struct {
	shared
	usage         resource.ModernTracker
	tenantClients TenantClients
	logons        Logons
	// providerConfigs resolves the resource's ProviderConfig.
	providerConfigs tenantconfig.Resolver
	// told remembers the rejections of a ProviderConfig's credentials told
	// (one event per rejection, not one per resource) and the certificate
	// expiry warnings (one a day per ProviderConfig and certificate).
	told *toldOnce
}

func (c *connector) Connect(ctx context.Context, cr *v1alpha1.IASApplication) (managed.TypedExternalClient[*v1alpha1.IASApplication], error) {
	// Resolved first: a usage is recorded only where the config admits the
	// resource, so that no namespace can hold the platform's config from
	// being deleted by naming it.
	cfg, err := c.providerConfigs.Resolve(ctx, c.kube, cr)
	if err != nil {
		return nil, err
	}
	if err := c.usage.Track(ctx, cr); err != nil {
		return nil, errors.Wrap(err, errTrackUsage)
	}
	cl, err := c.tenantClients.Client(cfg.Tenant)
	if err != nil {
		return nil, err
	}
	if f, ok := reconciler.RecalledFailure(cr); ok {
		// After a restart: the tenant failed when last tried.
		c.logons.Recall(cfg.Tenant, f)
	}
	if at, ok := c.logons.Rejected(cfg.Tenant); ok {
		c.reportRejected(cfg, at)
	}
	c.reportCertificate(cfg, time.Now())
	return newExternal(c.shared, cl, cfg, time.Now), nil
}

// newExternal is the client of one reconcile of a resource of cfg, calling
// IAS with cl.
func newExternal(s shared, cl inventory.Client, cfg tenantconfig.Resolved, now func() time.Time) *external {
	return &external{ias: cl, kube: s.kube, recorder: s.recorder, created: s.created, deleted: s.deleted,
		globalAccount: cfg.GlobalAccount, globalAccountFromKyma: cfg.GlobalAccountFromKymaLabel, now: now,
		ownership: &appOwnership{ias: cl, kube: s.kube, reader: s.reader, recorder: s.recorder, created: s.created, names: s.names,
			nameScope: nameScope(cfg.Tenant), listSettle: s.listSettle, inventoryAge: s.inventoryAge, now: now},
		secrets: &secretKeeper{ias: cl, kube: s.kube, recorder: s.recorder, publisher: s.publisher, users: s.users, checks: s.checks,
			secretCheck: s.secretCheck, rotation: lifetimeOf(cfg.SecretRotation), metrics: s.secretMetrics, now: now}}
}

// checkCertsURL says, in a condition and an event, when the tenant's certs URL
// is not <issuer>/oauth2/certs: the runtime's APIRules would then reject every
// token. The credentials are published all the same; the fix is the tenant's.
func (e *external) checkCertsURL(cr *v1alpha1.IASApplication, ep ias.Endpoints) {
	old := cr.GetCondition(TypeCertsURL)
	c := xpv2.Condition{Type: TypeCertsURL, Status: corev1.ConditionTrue, Reason: ReasonFitsIssuer, LastTransitionTime: metav1.Now()}
	if !ep.CertsURLFitsIssuer() {
		msg := fmt.Sprintf("The tenant's jwks_uri %s is not its issuer %q plus /oauth2/certs: Kyma's eventing manager derives the issuer from certs_url, so the runtime's APIRules would reject every token. Use the tenant's default domain as the ProviderConfig's url (a custom domain's well-known document names other URLs)", ep.CertsURL, ep.Issuer)
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, ReasonNotUnderIssuer, msg
		if old.Status != corev1.ConditionFalse {
			e.recorder.Event(cr, event.Warning(eventCertsURL, errors.New(msg)))
		}
	}
	if old.Status == c.Status && old.Message == c.Message {
		return // keep the transition time: nothing to write
	}
	cr.SetConditions(c)
}

// reportRejected tells the ProviderConfig, once per rejection, that IAS
// rejected its credentials and that its resources make no call with them.
func (c *connector) reportRejected(cfg tenantconfig.Resolved, at time.Time) {
	pc := cfg.ProviderConfig
	key := fmt.Sprintf("%T/%s/%s", pc, client.ObjectKeyFromObject(pc), at)
	if !c.told.first("rejected/" + key) {
		return
	}
	c.recorder.Event(pc, event.Warning(eventRejected, fmt.Errorf(
		"IAS tenant %s rejected the credentials (401 or 403) at %s: %s",
		cfg.Tenant.URL, at.UTC().Format(time.RFC3339), breaker.RejectedRule)))
}

// external reconciles one IASApplication with its IAS tenant. It lives for one
// reconcile.
type external struct {
	ias      inventory.Client
	kube     client.Client
	recorder event.Recorder
	created  *created
	deleted  *deleted
	// ownership finds the app and decides whose it is.
	ownership *appOwnership
	// secrets keeps the app's api secrets and its connection Secret.
	secrets       *secretKeeper
	globalAccount string
	// globalAccountFromKyma: the ProviderConfig asks for the Kyma CR's label.
	globalAccountFromKyma bool
	now                   func() time.Time
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.IASApplication) (managed.ExternalObservation, error) {
	e.ownership.catchUp(ctx, cr)
	if meta.WasDeleted(cr) {
		obs, err := e.observeDeletion(ctx, cr)
		if err == nil && !obs.ResourceExists {
			e.ownership.releaseName(ctx, cr)
		}
		return obs, err
	}
	if c, ok := e.recallCreate(cr); ok {
		return e.observeCreated(ctx, cr, c)
	}
	if _, err := wantedOwner(cr); err != nil {
		return managed.ExternalObservation{}, err
	}
	app, adopted, err := e.ownership.find(ctx, cr)
	if conflict := (*OwnerConflictError)(nil); errors.As(err, &conflict) {
		// Not this resource's app: its status names only an app it holds
		// (takenByExternalName reads it).
		cr.Status.AtProvider.ID = ""
		return managed.ExternalObservation{}, err
	}
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if app == nil {
		// To be created: the Update that records the pending creation
		// persists the finalizer too, so crossplane-runtime need not write it
		// alone first. If nothing is created, nothing needs it.
		meta.AddFinalizer(cr, managed.FinalizerName)
		return managed.ExternalObservation{}, nil
	}
	if err := e.ownership.take(cr, app, adopted); err != nil {
		return managed.ExternalObservation{}, err
	}
	taken := adopted || takenByExternalName(cr, app)
	endpoints, err := e.ias.Endpoints(ctx)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	at := &cr.Status.AtProvider
	at.ID, at.ClientID, at.TokenURL, at.CertsURL = app.ID, app.ClientID, endpoints.TokenURL, endpoints.CertsURL
	e.checkCertsURL(cr, endpoints)
	return e.observeApp(ctx, cr, app, taken, endpoints)
}

// observeApp observes the api secrets of the resource's app: which is
// published, whether one is due for rotation or retirement, and whether the
// app drifted. taken: the resource takes the app now (by name or by external
// name), so the secrets it holds are recorded as inherited.
func (e *external) observeApp(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application, taken bool, endpoints ias.Endpoints) (managed.ExternalObservation, error) {
	conn, err := connectionSecret(ctx, e.kube, cr)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	all, err := e.secrets.list(ctx, cr, app, conn)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if taken {
		inherit(cr, all)
	}
	st := e.secrets.state(cr, app, all, conn)
	if st.cur != nil {
		if err := e.secrets.adoptConnection(ctx, cr, conn); err != nil {
			return managed.ExternalObservation{}, err
		}
	}
	due, err := e.secrets.observe(ctx, cr, st)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	// A secret due for rotation still works: the resource stays Ready.
	if st.missing != "" && mayPublish(cr) {
		cr.SetConditions(xpv2.Unavailable().WithMessage(st.missing))
	} else {
		cr.SetConditions(xpv2.Available())
	}
	obs := managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        st.missing == "" && st.rotate == "" && len(drift(cr, app)) == 0 && len(due) == 0,
		ResourceLateInitialized: taken,
	}
	if st.value != "" {
		obs.ConnectionDetails = unpublished(conn, details(app.ClientID, st.value, endpoints))
	}
	return obs, nil
}

// recallCreate is what this resource's Create made, while no Observe since
// has recorded the app (created.recall).
func (e *external) recallCreate(cr *v1alpha1.IASApplication) (createdApp, bool) {
	return e.created.recall(cr.GetUID(), meta.GetExternalName(cr), cr.Status.AtProvider.SecretsCheckedAt != nil, e.now())
}

// observeCreated is the Observe right after a Create: the app and its secret
// are as the Create made them, so IAS is not asked again.
func (e *external) observeCreated(ctx context.Context, cr *v1alpha1.IASApplication, c createdApp) (managed.ExternalObservation, error) {
	endpoints, err := e.ias.Endpoints(ctx)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	at := &cr.Status.AtProvider
	at.ID, at.ClientID, at.TokenURL, at.CertsURL = c.app.ID, c.app.ClientID, endpoints.TokenURL, endpoints.CertsURL
	e.checkCertsURL(cr, endpoints)
	st := secretState{ours: []ias.APISecret{c.secret}, cur: &c.secret, value: c.secret.Value}
	e.secrets.checkedAt(cr, c.at)
	if _, err := e.secrets.observe(ctx, cr, st); err != nil {
		return managed.ExternalObservation{}, err
	}
	cr.SetConditions(xpv2.Available())
	// Published by the Create's reconcile; the cache may not hold it yet.
	conn, err := connectionSecret(ctx, e.kube, cr)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true,
		ConnectionDetails: unpublished(conn, details(c.app.ClientID, c.secret.Value, endpoints))}, nil
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.IASApplication) (managed.ExternalCreation, error) {
	ga := e.appGlobalAccount(cr)
	if err := e.ownership.claimName(ctx, cr, cr.AppName()); err != nil {
		return managed.ExternalCreation{}, err
	}
	e.created.noteCreateSent(cr.GetUID(), e.now())
	desc := ownedDescription(ownerOf(cr))
	id, err := e.ias.CreateApplication(ctx, ias.ApplicationSpec{Name: cr.AppName(), DisplayName: cr.AppDisplayName(), Description: desc, GlobalAccount: ga})
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
	cd, err := e.secrets.mint(ctx, cr, app, endpoints)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	at := cr.Status.AtProvider
	app.DisplayName, app.Description, app.SSOType, app.Type, app.ClientID = cr.AppDisplayName(), desc, ias.SSOTypeOIDC, ias.TypeCharged, at.ClientID
	secret := ias.APISecret{ID: at.SecretID, ClientID: at.ClientID, Hint: at.SecretHint, Description: description(cr),
		Value: string(cd[v1alpha1.KeyClientSecret])}
	if at.SecretValidTo != nil {
		secret.ValidTo = &at.SecretValidTo.Time
	}
	e.created.put(cr.GetUID(), createdApp{app: *app, secret: secret, at: e.now()})
	return managed.ExternalCreation{ConnectionDetails: cd}, nil
}

// Update brings the app back to its spec, publishes a new secret when there is
// no usable one or rotation is due, and deletes older secrets once retired.
func (e *external) Update(ctx context.Context, cr *v1alpha1.IASApplication) (managed.ExternalUpdate, error) {
	id := meta.GetExternalName(cr)
	app, err := e.ias.GetApplication(ctx, id)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	if err := ownedElsewhere(cr, app); err != nil {
		// Observe read an older listing that still named this resource: its
		// status names only an app it holds (takenByExternalName reads it).
		cr.Status.AtProvider.ID = ""
		return managed.ExternalUpdate{}, err
	}
	if handingOver(cr) {
		if err := e.ownership.claimsHandOver(ctx, cr, app); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	if p := drift(cr, app); len(p) > 0 {
		if app.Name != cr.AppName() {
			if err := e.ownership.renameFree(ctx, cr, app); err != nil {
				return managed.ExternalUpdate{}, err
			}
		}
		if err := e.ias.PatchApplication(ctx, id, p); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	if handingOver(cr) {
		// The app is the target's now: this resource keeps no record of it
		// and does nothing more with it.
		to, _ := wantedOwner(cr)
		cr.Status.AtProvider.ID = ""
		e.recorder.Event(cr, event.Normal(eventHandedOver, fmt.Sprintf("Handed IAS application %s over to IASApplication %s", appIDName(id, app.Name), to)))
		return managed.ExternalUpdate{}, nil
	}
	cd, err := e.secrets.update(ctx, cr, app)
	return managed.ExternalUpdate{ConnectionDetails: cd}, err
}

// Delete deletes the app that Observe, asking IAS by UUID in the same
// reconcile, found recorded in IAS as this resource's.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.IASApplication) (managed.ExternalDelete, error) {
	id := meta.GetExternalName(cr)
	if id == "" {
		return managed.ExternalDelete{}, nil
	}
	if err := e.ias.DeleteApplication(ctx, id); err != nil && !ias.IsNotFound(err) {
		return managed.ExternalDelete{}, err
	}
	e.deleted.put(cr.GetUID(), id, e.now())
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }

// appGlobalAccount is the globalAccount a new app gets: the resource's own;
// else, where the ProviderConfig asks for it, its Kyma CR's label; else the
// ProviderConfig's, as eventing-auth-manager sent one value for every app.
func (e *external) appGlobalAccount(cr *v1alpha1.IASApplication) string {
	if ga := cr.Spec.ForProvider.GlobalAccount; ga != "" {
		return ga
	}
	if ga := cr.GetAnnotations()[apis.AnnotationKymaGlobalAccount]; e.globalAccountFromKyma && ga != "" {
		return ga
	}
	return e.globalAccount
}

// mayPublish tells whether the management policies let the provider create and
// publish a client secret (they allow Update); an observe-only resource is Ready
// once the app exists. No policies at all means the feature is off.
func mayPublish(cr *v1alpha1.IASApplication) bool {
	p := cr.GetManagementPolicies()
	return managed.NewManagementPoliciesResolver(len(p) > 0, p).ShouldUpdate()
}

// ownerName names an owner as IAS records it, for an event.
func ownerName(owner string) string {
	if owner == "" {
		return "no IASApplication (an app of eventing-auth-manager, made by hand, or made before owners were recorded)"
	}
	return "IASApplication " + owner
}
