package iasapplication

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/internal/secretmetrics"
)

// secretKeeper keeps the api secrets of a resource's app: which one the
// connection Secret publishes, when it is replaced (rotation, lifetime) and
// when older ones are deleted (retirement). It lives for one reconcile.
type secretKeeper struct {
	ias       inventory.Client
	kube      client.Client
	recorder  event.Recorder
	publisher managed.LocalConnectionPublisher
	// users tells which RuntimeSecrets do not carry the published secret yet.
	users Users
	// checks remembers when each app's secrets were last listed.
	checks *secretChecks
	// secretCheck is how long the published secret is taken as the status
	// records it before IAS is asked again; 0: every poll.
	secretCheck time.Duration
	// rotation is the ProviderConfig's secretRotation.
	rotation secretLifetime
	// metrics counts rotations; nil counts nothing.
	metrics *secretmetrics.Metrics
	now     func() time.Time
}

// checkedAt records that the app's secrets were listed at t.
func (k *secretKeeper) checkedAt(cr *v1alpha1.IASApplication, t time.Time) {
	cr.Status.AtProvider.SecretsCheckedAt = &metav1.Time{Time: t}
	k.checks.checked(cr, t)
}

// maxSecrets is how many api secrets of this provider an app holds at most: the
// published one and the one it replaced, until the runtimes have taken up the new.
const maxSecrets = 2

// secretState is what IAS and the connection Secret say about an app's secrets.
type secretState struct {
	// ours are the app's secrets that carry this provider's description, in IAS's order.
	ours []ias.APISecret
	// cur is the secret in the connection Secret; nil if there is none usable.
	cur *ias.APISecret
	// value is cur's value, from the connection Secret.
	value string
	// dataHash digests the connection Secret's keys, as RuntimeSecrets report
	// what they wrote on their runtimes.
	dataHash string
	// missing says why there is no usable secret; empty when cur is set.
	missing string
	// rotate says why cur is due for replacement; empty if it is not.
	rotate string
}

// retiring are ours other than cur: older secrets kept until runtimes move on.
func (s secretState) retiring() []ias.APISecret {
	var out []ias.APISecret
	for _, o := range s.ours {
		if s.cur == nil || o.ID != s.cur.ID {
			out = append(out, o)
		}
	}
	return out
}

// state derives which secret is published from IAS and the connection Secret
// (conn, nil if there is none) on every call, so that nothing depends on
// bookkeeping a lost status write could drop: the published secret is the one of
// ours whose hint begins the value in the connection Secret.
func (k *secretKeeper) state(cr *v1alpha1.IASApplication, app *ias.Application, all []ias.APISecret, conn *corev1.Secret) secretState {
	st := secretState{}
	for _, s := range all {
		if s.Description == description(cr) || inherited(cr, s.ID) {
			st.ours = append(st.ours, s)
		}
	}
	if ref := cr.GetWriteConnectionSecretToReference(); ref == nil {
		// Nothing to check against: the newest of ours is the current one.
		if len(st.ours) == 0 {
			st.missing = "no client secret has been created for this application yet"
			return st
		}
		st.cur = &st.ours[len(st.ours)-1]
	} else {
		if conn == nil {
			st.missing = fmt.Sprintf("connection Secret %s does not exist yet or was deleted; a new client secret is needed", ref.Name)
			return st
		}
		st.value = string(conn.Data[v1alpha1.KeyClientSecret])
		st.dataHash = connectionHash(conn.Data)
		for i := range st.ours {
			o := &st.ours[i]
			if o.Hint != "" && strings.HasPrefix(st.value, o.Hint) && (o.ClientID == "" || o.ClientID == app.ClientID) {
				st.cur = o
			}
		}
		if st.cur == nil {
			st.missing = fmt.Sprintf("connection Secret %s holds no client secret that exists in IAS for application %s; a new one is needed", ref.Name, app.ID)
			return st
		}
	}
	switch at := k.rotatesAt(cr, *st.cur); {
	case due(at, k.now()):
		st.rotate = fmt.Sprintf("client secret %s… is due for rotation since %s", st.cur.Hint, at.UTC().Format(time.RFC3339))
		if st.cur.ValidTo != nil {
			st.rotate += fmt.Sprintf(" (rotateBefore its expiry at %s)", st.cur.ValidTo.UTC().Format(time.RFC3339))
		}
	case st.cur.ValidTo != nil && k.lifetime(cr).validFor <= 0:
		// Secrets without expiry are asked for (secretRotation removed, as
		// before handing runtimes back to eventing-auth-manager, which never
		// renews one): nothing would replace this one before it expires.
		st.rotate = fmt.Sprintf("client secret %s… expires at %s, and secrets without expiry are asked for (no secretRotation, no validFor)",
			st.cur.Hint, st.cur.ValidTo.UTC().Format(time.RFC3339))
	}
	return st
}

// rotatesAt is when s is replaced: from its expiry, or, for a secret that
// never expires, from when the status says it was first published.
func (k *secretKeeper) rotatesAt(cr *v1alpha1.IASApplication, s ias.APISecret) *metav1.Time {
	var published *time.Time
	if at := cr.Status.AtProvider; at.SecretID == s.ID && at.SecretPublishedAt != nil {
		published = &at.SecretPublishedAt.Time
	}
	return k.lifetime(cr).rotatesAt(s.ValidTo, published)
}

// list returns the app's api secrets: as IAS lists them, or, between
// listings at most secretCheck apart, the published one as the status records
// it, while the connection Secret still holds it and nothing retires or rotates.
// A secret deleted in IAS behind the provider's back is so found within
// secretCheck, at one list per app per secretCheck instead of one per poll.
func (k *secretKeeper) list(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application, conn *corev1.Secret) ([]ias.APISecret, error) {
	if known, ok := k.known(cr, app, conn); ok {
		return known, nil
	}
	all, err := k.ias.ListAPISecrets(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	// Remembered, not written: what the listing changes (a new secret, a
	// retirement) writes the status itself.
	k.checks.checked(cr, k.now())
	if cr.Status.AtProvider.SecretsCheckedAt == nil {
		cr.Status.AtProvider.SecretsCheckedAt = &metav1.Time{Time: k.now()}
	}
	return all, nil
}

func (k *secretKeeper) known(cr *v1alpha1.IASApplication, app *ias.Application, conn *corev1.Secret) ([]ias.APISecret, bool) {
	at := cr.Status.AtProvider
	if k.secretCheck <= 0 || at.SecretID == "" || at.SecretHint == "" || at.SecretsCheckedAt == nil ||
		k.now().Sub(k.checks.last(cr, k.now(), k.secretCheck)) >= k.secretCheck || len(at.Retiring) > 0 {
		return nil, false
	}
	if conn == nil || string(conn.Data[v1alpha1.KeyClientID]) != app.ClientID ||
		!strings.HasPrefix(string(conn.Data[v1alpha1.KeyClientSecret]), at.SecretHint) {
		return nil, false
	}
	sec := ias.APISecret{ID: at.SecretID, Hint: at.SecretHint, ClientID: app.ClientID, Description: description(cr)}
	if at.SecretValidTo != nil {
		t := at.SecretValidTo.Time
		sec.ValidTo = &t
	}
	if due(k.rotatesAt(cr, sec), k.now()) {
		// A rotation falls due: decided on what IAS says.
		return nil, false
	}
	return []ias.APISecret{sec}, true
}

// connectionSecret returns the connection Secret, nil if it does not exist.
func connectionSecret(ctx context.Context, kube client.Reader, cr *v1alpha1.IASApplication) (*corev1.Secret, error) {
	ref := cr.GetWriteConnectionSecretToReference()
	if ref == nil {
		return nil, nil
	}
	s := &corev1.Secret{}
	err := kube.Get(ctx, types.NamespacedName{Namespace: cr.GetNamespace(), Name: ref.Name}, s)
	switch {
	case kerrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, errors.Wrapf(err, errGetConnection, ref.Name)
	}
	return s, nil
}

// publishedClientID is the client ID in the connection Secret, if any.
func publishedClientID(ctx context.Context, kube client.Reader, cr *v1alpha1.IASApplication) string {
	s, err := connectionSecret(ctx, kube, cr)
	if err != nil || s == nil {
		return ""
	}
	return string(s.Data[v1alpha1.KeyClientID])
}

// connectionHash digests the connection keys as a RuntimeSecret digests what it
// wrote on its runtime, so the two can be compared without the values.
func connectionHash(data map[string][]byte) string {
	d := make(map[string][]byte, len(v1alpha1.ConnectionKeys))
	for _, k := range v1alpha1.ConnectionKeys {
		d[k] = data[k]
	}
	return runtimev1alpha1.DataHash(d)
}

// observe records the published secret and the retiring ones in the
// status and returns the retiring secrets now due for deletion.
func (k *secretKeeper) observe(ctx context.Context, cr *v1alpha1.IASApplication, st secretState) ([]ias.APISecret, error) {
	at := &cr.Status.AtProvider
	if st.cur == nil {
		// Keep naming the last published secret: it is what runtimes still hold.
		at.Retiring = nil
		return nil, nil
	}
	if at.SecretID != st.cur.ID || at.SecretPublishedAt == nil {
		// First seen now; counting from now never retires a secret too early.
		at.SecretPublishedAt = &metav1.Time{Time: k.now()}
	}
	at.SecretID, at.SecretHint, at.SecretValidTo = st.cur.ID, st.cur.Hint, nil
	if st.cur.ValidTo != nil {
		at.SecretValidTo = &metav1.Time{Time: *st.cur.ValidTo}
	}
	at.SecretRotatesAt = k.rotatesAt(cr, *st.cur)
	retiring := st.retiring()
	if len(retiring) == 0 {
		at.Retiring = nil
		return nil, nil
	}
	waiting, carrying := "", 0
	if cr.GetWriteConnectionSecretToReference() != nil {
		var err error
		if waiting, carrying, err = k.users.NotYetCarrying(ctx, cr, st.dataHash); err != nil {
			return nil, err
		}
	}
	if waiting == "" && carrying == 0 && len(madeHere(cr, retiring)) < len(retiring) {
		waiting = waitingForInherited
	}
	recordRetiring(cr, retiring, waiting)
	if waiting != "" || k.now().Before(at.SecretPublishedAt.Add(retireAfter(cr))) {
		// An expired secret authenticates nobody: nothing is lost by deleting
		// it, and its place is free for the next rotation.
		return expired(retiring, k.now()), nil
	}
	return retiring, nil
}

// expired are the secrets of ss whose validTo has passed at now.
func expired(ss []ias.APISecret, now time.Time) []ias.APISecret {
	var out []ias.APISecret
	for _, s := range ss {
		if isExpired(s, now) {
			out = append(out, s)
		}
	}
	return out
}

// isExpired tells whether s's validTo has passed at now.
func isExpired(s ias.APISecret, now time.Time) bool {
	return s.ValidTo != nil && !now.Before(*s.ValidTo)
}

// waitingForInherited is what a secret the app held when this resource took
// it waits for, while no RuntimeSecret uses the resource: a runtime may hold
// it through a Secret this provider does not know of.
const waitingForInherited = "a RuntimeSecret using this application to carry its new secret on its runtime: the older secret came with the application, and a runtime may still use it"

// recordRetiring lists the retiring secrets in the status: each is deleted not
// before the published secret's publication plus retireAfter, and only once
// nothing named in waiting holds it back.
func recordRetiring(cr *v1alpha1.IASApplication, retiring []ias.APISecret, waiting string) {
	at := &cr.Status.AtProvider
	at.Retiring = nil
	for _, s := range retiring {
		at.Retiring = append(at.Retiring, v1alpha1.RetiringSecret{ID: s.ID, Hint: s.Hint,
			DeleteAfter: metav1.NewTime(at.SecretPublishedAt.Add(retireAfter(cr))), WaitingFor: waiting})
	}
}

// retireAfter is the grace period of an older secret.
func retireAfter(cr *v1alpha1.IASApplication) time.Duration {
	if d := cr.Spec.ForProvider.Secret.RetireAfter; d != nil {
		return d.Duration
	}
	return v1alpha1.DefaultRetireAfter
}

// update lists the app's api secrets, deletes those retired or expired, and
// publishes a new one when none is usable or a rotation is due; the details
// returned are the new secret's, nil when none was made.
func (k *secretKeeper) update(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application) (managed.ConnectionDetails, error) {
	all, err := k.ias.ListAPISecrets(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	k.checkedAt(cr, k.now())
	conn, err := connectionSecret(ctx, k.kube, cr)
	if err != nil {
		return nil, err
	}
	st := k.state(cr, app, all, conn)
	due, err := k.observe(ctx, cr, st)
	if err != nil {
		return nil, err
	}
	for _, s := range due {
		why := "after every RuntimeSecret using this application took up its successor and the grace period passed"
		if isExpired(s, k.now()) {
			why = "since it expired at " + s.ValidTo.UTC().Format(time.RFC3339)
		}
		if err := k.remove(ctx, cr, app.ID, s, why); err != nil {
			return nil, err
		}
		st.ours = without(st.ours, s.ID)
		cr.Status.AtProvider.Retiring = slices.DeleteFunc(cr.Status.AtProvider.Retiring, func(r v1alpha1.RetiringSecret) bool { return r.ID == s.ID })
	}
	if st.missing == "" && st.rotate == "" {
		return nil, nil
	}
	replace := k.replace
	if st.missing == "" {
		replace = k.rotate
	}
	cd, err := replace(ctx, cr, app, &st)
	if err != nil || cd == nil {
		return nil, err
	}
	// The new secret is out: the resource is Ready now, not at the next poll.
	// Every older one of ours retires, counting from now.
	recordRetiring(cr, st.ours, "RuntimeSecrets using this application to carry the new secret")
	cr.SetConditions(xpv2.Available())
	return cd, nil
}

// without is secrets without the one of the id.
func without(secrets []ias.APISecret, id string) []ias.APISecret {
	var out []ias.APISecret
	for _, s := range secrets {
		if s.ID != id {
			out = append(out, s)
		}
	}
	return out
}

// replace creates and publishes a new secret. With cur still published
// (a rotation) it waits while an older one is still retiring, so that no more
// than maxSecrets exist. With none usable, it first deletes the oldest of ours,
// keeping the last published, since nothing can be published otherwise.
func (k *secretKeeper) replace(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application, st *secretState) (managed.ConnectionDetails, error) {
	if len(madeHere(cr, st.ours)) >= maxSecrets {
		if st.cur != nil {
			k.recorder.Event(cr, event.Normal(eventRotationWaits, fmt.Sprintf(
				"Rotation waits: %s, but an older secret is still retiring and an application holds at most %d secrets of this provider", st.rotate, maxSecrets)))
			return nil, nil
		}
		kept, err := k.makeRoom(ctx, cr, app, madeHere(cr, st.ours))
		if err != nil {
			return nil, err
		}
		st.ours = append(kept, slices.DeleteFunc(slices.Clone(st.ours), func(s ias.APISecret) bool { return !inherited(cr, s.ID) })...)
	}
	endpoints, err := k.ias.Endpoints(ctx)
	if err != nil {
		return nil, err
	}
	cd, err := k.mint(ctx, cr, app, endpoints)
	if err != nil {
		return nil, err
	}
	// Published before anything else happens, so that the runtimes can take it up.
	if _, err := k.publisher.PublishConnection(ctx, cr, cd); err != nil {
		return nil, errors.Wrap(err, errPublish)
	}
	at := &cr.Status.AtProvider
	at.SecretPublishedAt = &metav1.Time{Time: k.now()}
	// Told for a replacement only: a new application's first secret comes with
	// crossplane-runtime's creation event, and the status names its hint.
	k.recorder.Event(cr, event.Normal(eventNewSecret, fmt.Sprintf("Created client secret %s… for IAS application %s and published it", at.SecretHint, app.ID)))
	if len(st.ours) > 0 {
		hints := make([]string, 0, len(st.ours))
		for _, o := range st.ours {
			hints = append(hints, o.Hint+"…")
		}
		k.recorder.Event(cr, event.Normal(eventRetiringSecret, fmt.Sprintf(
			"Retiring client secret %s: it is deleted in IAS once every RuntimeSecret using this application carries the new one, and not before %s",
			strings.Join(hints, ", "), at.SecretPublishedAt.Add(retireAfter(cr)).UTC().Format(time.RFC3339))))
	}
	return cd, nil
}

// makeRoom deletes the oldest of ours until one is left, keeping the one last
// published (the status names it), which runtimes most likely hold.
func (k *secretKeeper) makeRoom(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application, ours []ias.APISecret) ([]ias.APISecret, error) {
	keep := len(ours) - 1
	for i := range ours {
		if ours[i].ID == cr.Status.AtProvider.SecretID {
			keep = i
		}
	}
	for i, s := range ours {
		if i == keep {
			continue
		}
		if err := k.remove(ctx, cr, app.ID, s, "to make room for a new one: none of this provider's secrets is in the connection Secret"); err != nil {
			return nil, err
		}
	}
	return ours[keep : keep+1], nil
}

// remove deletes one of our secrets in IAS and says why.
func (k *secretKeeper) remove(ctx context.Context, cr *v1alpha1.IASApplication, appID string, s ias.APISecret, why string) error {
	if err := k.ias.DeleteAPISecret(ctx, appID, s.ID); err != nil && !ias.IsNotFound(err) {
		return err
	}
	k.recorder.Event(cr, event.Normal(eventDeletedSecret, fmt.Sprintf("Deleted the older client secret %s… (id %s) %s", s.Hint, s.ID, why)))
	return nil
}

// mint creates an api secret and records it in the status.
func (k *secretKeeper) mint(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application, endpoints ias.Endpoints) (managed.ConnectionDetails, error) {
	spec := ias.SecretSpec{Description: description(cr), AuthorizationScopes: cr.Spec.ForProvider.Secret.AuthorizationScopes}
	if len(spec.AuthorizationScopes) == 0 {
		spec.AuthorizationScopes = []string{"oAuth"}
	}
	if d := k.lifetime(cr).validFor; d > 0 {
		t := k.now().Add(d).UTC().Truncate(time.Second)
		spec.ValidTo = &t
	}
	s, err := k.ias.CreateAPISecret(ctx, app.ID, spec)
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
	at.SecretRotatesAt = k.lifetime(cr).rotatesAt(s.ValidTo, nil)
	return details(s.ClientID, s.Value, endpoints), nil
}

// unpublished is cd, or nothing when the connection Secret conn holds exactly
// cd already. crossplane-runtime publishes what every Observe returns, and its
// publisher tells an unchanged Secret with go-cmp, element by element through
// reflection, at every poll of every resource: far more than the byte
// comparison here. With
// nothing to publish it finds the Secret differing at once and patches it with
// no data, which the manager's client does not send
// (kube.SkipEmptyConnectionSecrets).
func unpublished(conn *corev1.Secret, cd managed.ConnectionDetails) managed.ConnectionDetails {
	if conn == nil || len(conn.StringData) > 0 || !maps.EqualFunc(conn.Data, cd, bytes.Equal) {
		return cd
	}
	return nil
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
