package iasapplication

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/tenantconfig"
	"github.com/kyma-project/provider-eventing-auth/internal/secretmetrics"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// rotationCounts reads eventing_auth_secret_rotations_total as "succeeded failed".
func rotationCounts(t *testing.T, m *secretmetrics.Metrics) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "eventing_auth_secret_rotations_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			got[s.GetLabel()[0].GetValue()] = s.GetCounter().GetValue()
		}
	}
	return fmt.Sprintf("%.0f %.0f", got["succeeded"], got["failed"])
}

const appID = "11111111-1111-1111-1111-111111111111"

// world is what one case starts from.
type world struct {
	cr      *v1alpha1.IASApplication
	ias     *fakeIAS
	conn    map[string][]byte // the connection Secret's data; nil: none
	pending string            // what Users answers
	// steady turns on the inventory (a minute) and secret checks (an hour).
	steady bool
	// listedAgo, if set, is when this process last listed the app's secrets.
	listedAgo *time.Duration
	// others are further IASApplications in the cluster.
	others []*v1alpha1.IASApplication
	// rotation is the ProviderConfig's secretRotation.
	rotation secretLifetime
}

// result is what one case published.
type result struct {
	published []managed.ConnectionDetails
}

func (w world) external(t *testing.T) (*external, *result) {
	t.Helper()
	s := fakes.Scheme()
	b := indexed(fake.NewClientBuilder().WithScheme(s)).WithObjects(w.cr.DeepCopy())
	for _, o := range w.others {
		b = b.WithObjects(o.DeepCopy())
	}
	if w.conn != nil {
		b = b.WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rt-creds"}, Data: w.conn})
	}
	kube := b.Build()
	r := &result{}
	log := &fakes.Events{}
	sh := shared{
		kube: kube, reader: kube, recorder: log, listSettle: time.Minute, created: newCreated(), deleted: newDeleted(), checks: newSecretChecks(time.Hour),
		users:     usersFn(func(string) string { return w.pending }),
		publisher: publisherFn(func(cd managed.ConnectionDetails) { r.published = append(r.published, cd) })}
	if w.steady {
		sh.inventoryAge, sh.secretCheck = time.Minute, time.Hour
	}
	e := newExternal(sh, w.ias, tenantconfig.Resolved{}, func() time.Time { return at })
	e.secrets.rotation = w.rotation
	if w.listedAgo != nil {
		e.secrets.checks.checked(w.cr, at.Add(-*w.listedAgo))
	}
	return e, r
}

// newCR is an IASApplication "rt" in namespace "ns" publishing to "rt-creds".
func newCR(mods ...func(*v1alpha1.IASApplication)) *v1alpha1.IASApplication {
	cr := &v1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "ns"}}
	cr.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "rt-creds"})
	for _, m := range mods {
		m(cr)
	}
	return cr
}

// inDeletion marks the resource as being deleted since at.
func inDeletion(cr *v1alpha1.IASApplication) { deleting(cr, at) }

// observedAs records that an Observe found the app id (status.atProvider.id).
func observedAs(id string) func(*v1alpha1.IASApplication) {
	return func(cr *v1alpha1.IASApplication) { cr.Status.AtProvider.ID = id }
}

// withExternalName is a resource that knows its app: the external name its
// adoption or Create recorded, and the status of an Observe since.
func withExternalName(id string) func(*v1alpha1.IASApplication) {
	return func(cr *v1alpha1.IASApplication) {
		meta.SetExternalName(cr, id)
		cr.Status.AtProvider.ID = id
	}
}

// externalNameByHand is an external name set by a person (or a hand-over)
// that the resource has not observed yet.
func externalNameByHand(id string) func(*v1alpha1.IASApplication) {
	return func(cr *v1alpha1.IASApplication) { meta.SetExternalName(cr, id) }
}

// createdAgo says a create was sent d ago whose answer was lost.
func createdAgo(d time.Duration) func(*v1alpha1.IASApplication) {
	return func(cr *v1alpha1.IASApplication) {
		meta.SetExternalCreatePending(cr, at.Add(-d))
		meta.SetExternalCreateFailed(cr, at.Add(-d))
	}
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func publishedAgo(id string, d time.Duration) func(*v1alpha1.IASApplication) {
	return func(cr *v1alpha1.IASApplication) {
		cr.Status.AtProvider.SecretID = id
		cr.Status.AtProvider.SecretPublishedAt = &metav1.Time{Time: at.Add(-d)}
	}
}

func ourApp(id string, created time.Time) ias.Application {
	return ias.Application{ID: id, Name: "rt", DisplayName: "rt", Description: ownedDescription("ns/rt"), SSOType: ias.SSOTypeOIDC,
		Type: ias.TypeCharged, ClientID: "client-" + id, Created: created}
}

func ourSecret(id, hint string) ias.APISecret {
	return ias.APISecret{ID: id, Hint: hint, ClientID: "client-" + appID, Description: v1alpha1.DefaultSecretDescription}
}

// conn is a connection Secret holding the secret with the given hint.
func conn(hint string) map[string][]byte {
	return map[string][]byte{
		v1alpha1.KeyClientID: []byte("client-" + appID), v1alpha1.KeyClientSecret: []byte(hint + "-value"),
		v1alpha1.KeyTokenURL: []byte("https://t/oauth2/token"), v1alpha1.KeyCertsURL: []byte("https://t/oauth2/certs"),
	}
}

func oneApp(secrets ...ias.APISecret) *fakeIAS {
	return &fakeIAS{apps: []ias.Application{ourApp(appID, at.Add(-time.Hour))}, secrets: map[string][]ias.APISecret{appID: secrets}}
}

func TestObserve(t *testing.T) {
	cases := map[string]struct {
		reason       string
		w            world
		exists       bool
		upToDate     bool
		lateInit     bool
		err          error
		ready        corev1.ConditionStatus
		externalName string
		calls        []string
		events       []string
		retiring     int
		// inherited is the annotation of inherited secrets afterwards.
		inherited string
	}{
		"known UUID, secret published": {
			reason: "the app named by its UUID holds the secret the connection Secret carries: nothing to do",
			w:      world{cr: newCR(withExternalName(appID)), ias: oneApp(ourSecret("s1", "abcd")), conn: conn("abcd")},
			exists: true, upToDate: true, ready: corev1.ConditionTrue, externalName: appID,
		},
		"no UUID, one app by name: adopted": {
			reason: "an app of ours found by name (after a lost status) is taken, not made again",
			w:      world{cr: newCR(), ias: oneApp(ourSecret("s1", "abcd")), conn: conn("abcd")},
			exists: true, upToDate: true, lateInit: true, ready: corev1.ConditionTrue, externalName: appID, inherited: "s1",
			events: []string{string(eventAdopted)},
		},
		"external name set by hand: the app's secrets are inherited": {
			reason: "an app taken by its external name (by hand or a hand-over) comes with secrets a runtime may hold: they are inherited, and wait for a RuntimeSecret to carry the published one, where the resource's own older secret would retire after its grace",
			w: world{cr: newCR(externalNameByHand(appID), publishedAgo("s2", 20*time.Minute)), ias: oneApp(ourSecret("s1", "old1"), ourSecret("s2", "abcd")),
				conn: conn("abcd"), pending: "1 of 1 RuntimeSecrets"},
			exists: true, upToDate: true, lateInit: true, ready: corev1.ConditionTrue, externalName: appID, inherited: "s1,s2", retiring: 1,
		},
		"no UUID, no app, no create sent: create": {
			reason: "nothing in IAS and no create sent: Create makes the app",
			w:      world{cr: newCR(), ias: &fakeIAS{}},
		},
		"create without answer 10s ago, not listed yet: wait, do not create": {
			reason: "IAS lists a new app late: a create sent without answer may have made one, so a second create waits",
			w:      world{cr: newCR(createdAgo(10 * time.Second)), ias: &fakeIAS{}},
			err:    errors.Errorf(errCreateUnanswered, "rt", rfc3339(at.Add(-10*time.Second+time.Minute))),
		},
		"create without answer 2m ago, still not listed: create again": {
			reason: "a create unanswered for longer than IAS lists late did not make an app",
			w:      world{cr: newCR(createdAgo(2 * time.Minute)), ias: &fakeIAS{}},
		},
		"create without answer, app listed: adopted": {
			reason: "the app the unanswered create made is taken",
			w:      world{cr: newCR(createdAgo(10 * time.Second)), ias: oneApp()},
			exists: true, lateInit: true, ready: corev1.ConditionFalse, externalName: appID,
			events: []string{string(eventAdopted)},
		},
		"two apps of ours, none published: the oldest kept, the other deleted": {
			reason: "duplicates from a crash are ours to delete; with none published the oldest stays",
			w: world{cr: newCR(), ias: &fakeIAS{apps: []ias.Application{
				ourApp("new", at.Add(-time.Minute)), ourApp(appID, at.Add(-time.Hour))}}},
			exists: true, lateInit: true, ready: corev1.ConditionFalse, externalName: appID,
			calls: []string{"delete app new"}, events: []string{string(eventDeletedDuplicate), string(eventAdopted)},
		},
		"two apps of ours, the newer published: the newer kept": {
			reason: "the app whose secret a runtime holds stays, whatever its age",
			w: world{cr: newCR(), conn: conn("abcd"), ias: &fakeIAS{apps: []ias.Application{
				ourApp("old", at.Add(-time.Hour)), ourApp(appID, at.Add(-time.Minute))},
				secrets: map[string][]ias.APISecret{appID: {ourSecret("s1", "abcd")}}}},
			exists: true, upToDate: true, lateInit: true, ready: corev1.ConditionTrue, externalName: appID, inherited: "s1",
			calls: []string{"delete app old"}, events: []string{string(eventDeletedDuplicate), string(eventAdopted)},
		},
		"an app of ours and a namesake without the marker: error, nothing deleted": {
			reason: "an app without our marker may be someone else's: nothing is deleted, and the error names both",
			w: world{cr: newCR(), ias: &fakeIAS{apps: []ias.Application{
				ourApp(appID, at.Add(-time.Hour)), {ID: "theirs", Name: "rt", Type: ias.TypeCharged}}}},
			err: errors.Errorf(errNamesakes, namesakes("rt", []string{appID, "theirs"}, 1)),
		},
		"known UUID after a create without answer: a late-listed duplicate of ours deleted": {
			reason: "an app listed late after a create was retried is a duplicate of ours",
			w: world{cr: newCR(withExternalName(appID), func(cr *v1alpha1.IASApplication) {
				meta.AddAnnotations(cr, map[string]string{apis.AnnotationUnconfirmedCreate: at.Add(-5 * time.Minute).Format(time.RFC3339)})
			}), conn: conn("abcd"), ias: &fakeIAS{apps: []ias.Application{ourApp("late", at.Add(-6*time.Minute)), ourApp(appID, at.Add(-5*time.Minute))},
				secrets: map[string][]ias.APISecret{appID: {ourSecret("s1", "abcd")}}}},
			exists: true, upToDate: true, ready: corev1.ConditionTrue, externalName: appID,
			calls: []string{"delete app late"}, events: []string{string(eventDeletedDuplicate)},
		},
		"known UUID gone from IAS: looked up by name, none: create": {
			reason: "an app deleted in IAS by hand is made again",
			w:      world{cr: newCR(withExternalName("22222222-2222-2222-2222-222222222222")), ias: &fakeIAS{}},
		},
		"deleting, UUID gone: gone, no namesake looked for": {
			reason: "a deletion whose app is gone is done: another app of the same name is not ours to delete",
			w:      world{cr: newCR(withExternalName("22222222-2222-2222-2222-222222222222"), inDeletion), ias: oneApp()},
		},
		"not a customer-created app: refused": {
			reason: "IAS bundled apps are never taken over",
			w:      world{cr: newCR(), ias: &fakeIAS{apps: []ias.Application{{ID: appID, Name: "rt", Type: "bundled"}}}},
			err:    errors.Errorf(errNotCharged, appIDName(appID, "rt"), "bundled"),
		},
		"connection Secret lost: not Ready, a new secret needed": {
			reason: "a secret IAS never shows again cannot be written once more: a new one is needed",
			w:      world{cr: newCR(withExternalName(appID)), ias: oneApp(ourSecret("s1", "abcd"))},
			exists: true, ready: corev1.ConditionFalse, externalName: appID,
		},
		"rotation due: still Ready, not up to date": {
			reason: "a secret close to its validTo still works while its successor is made",
			w: world{cr: newCR(withExternalName(appID), func(cr *v1alpha1.IASApplication) {
				cr.Spec.ForProvider.Secret.ValidFor = &metav1.Duration{Duration: 2 * time.Hour}
				cr.Spec.ForProvider.Secret.RotateBefore = &metav1.Duration{Duration: time.Hour}
			}), ias: oneApp(func() ias.APISecret {
				s := ourSecret("s1", "abcd")
				v := at.Add(30 * time.Minute)
				s.ValidTo = &v
				return s
			}()), conn: conn("abcd")},
			exists: true, ready: corev1.ConditionTrue, externalName: appID,
		},
		"older secret, a runtime still on it: kept, up to date": {
			reason: "a secret a runtime still holds is not deleted",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s2", time.Hour)), ias: oneApp(ourSecret("s1", "old1"), ourSecret("s2", "abcd")),
				conn: conn("abcd"), pending: "1 of 2 RuntimeSecrets"},
			exists: true, upToDate: true, ready: corev1.ConditionTrue, externalName: appID, retiring: 1,
		},
		"older secret, runtimes moved on, grace not over: kept": {
			reason: "runtimes that moved on get retireAfter before their old secret goes",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s2", 5*time.Minute)), ias: oneApp(ourSecret("s1", "old1"), ourSecret("s2", "abcd")),
				conn: conn("abcd")},
			exists: true, upToDate: true, ready: corev1.ConditionTrue, externalName: appID, retiring: 1,
		},
		"older secret, runtimes moved on, grace over: due": {
			reason: "an old secret no runtime needs is deleted by Update",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s2", 20*time.Minute)), ias: oneApp(ourSecret("s1", "old1"), ourSecret("s2", "abcd")),
				conn: conn("abcd")},
			exists: true, ready: corev1.ConditionTrue, externalName: appID, retiring: 1,
		},
		"published secret first seen now (status lost): grace counts from now": {
			reason: "without the time of publication the grace starts now, never earlier",
			w: world{cr: newCR(withExternalName(appID)), ias: oneApp(ourSecret("s1", "old1"), ourSecret("s2", "abcd")),
				conn: conn("abcd")},
			exists: true, upToDate: true, ready: corev1.ConditionTrue, externalName: appID, retiring: 1,
		},
		"a secret made by hand is never ours to retire": {
			reason: "only secrets with our description are retired",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s2", 20*time.Minute)), ias: oneApp(
				ias.APISecret{ID: "s1", Hint: "hand", Description: "made by hand"}, ourSecret("s2", "abcd")), conn: conn("abcd")},
			exists: true, upToDate: true, ready: corev1.ConditionTrue, externalName: appID,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, _ := tc.w.external(t)
			cr := tc.w.cr
			obs, err := e.Observe(context.Background(), cr)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s\nObserve() error: -want +got:\n%s", tc.reason, diff)
			}
			if tc.err != nil {
				if len(tc.w.ias.calls) > 0 {
					t.Errorf("%s\nObserve() changed IAS after an error: %v", tc.reason, tc.w.ias.calls)
				}
				return
			}
			got := [3]bool{obs.ResourceExists, obs.ResourceUpToDate, obs.ResourceLateInitialized}
			if want := [3]bool{tc.exists, tc.upToDate, tc.lateInit}; got != want {
				t.Errorf("%s\nObserve(): exists, upToDate, lateInit = %v, want %v", tc.reason, got, want)
			}
			if tc.exists {
				if s := cr.GetCondition(xpv2.TypeReady).Status; s != tc.ready {
					t.Errorf("%s\nReady = %s, want %s (%s)", tc.reason, s, tc.ready, cr.GetCondition(xpv2.TypeReady).Message)
				}
			}
			// To be created: the finalizer rides on the write that records the
			// pending creation; nothing else adds it in memory only.
			if finalized := meta.FinalizerExists(cr, managed.FinalizerName); !meta.WasDeleted(cr) && finalized != !tc.exists {
				t.Errorf("%s\nfinalizer in memory %v, want %v", tc.reason, finalized, !tc.exists)
			}
			if got := meta.GetExternalName(cr); got != tc.externalName && tc.exists {
				t.Errorf("%s\nexternal name = %q, want %q", tc.reason, got, tc.externalName)
			}
			if diff := cmp.Diff(tc.calls, tc.w.ias.calls); diff != "" {
				t.Errorf("%s\nIAS changes: -want +got:\n%s", tc.reason, diff)
			}
			if got := len(cr.Status.AtProvider.Retiring); got != tc.retiring {
				t.Errorf("%s\nstatus.atProvider.retiring has %d, want %d", tc.reason, got, tc.retiring)
			}
			if got := cr.GetAnnotations()[apis.AnnotationInheritedSecrets]; got != tc.inherited {
				t.Errorf("%s\ninherited secrets %q, want %q", tc.reason, got, tc.inherited)
			}
			if tc.events != nil {
				log := e.recorder.(*fakes.Events)
				if diff := cmp.Diff(tc.events, log.Reasons()); diff != "" {
					t.Errorf("%s\nevents: -want +got:\n%s", tc.reason, diff)
				}
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	expiring := func(id, hint string, in time.Duration) ias.APISecret {
		s := ourSecret(id, hint)
		v := at.Add(in)
		s.ValidTo = &v
		return s
	}
	rotating := func(cr *v1alpha1.IASApplication) {
		cr.Spec.ForProvider.Secret.ValidFor = &metav1.Duration{Duration: 2 * time.Hour}
		cr.Spec.ForProvider.Secret.RotateBefore = &metav1.Duration{Duration: time.Hour}
	}
	// platform is a ProviderConfig's secretRotation: valid 3h, replaced 2h before.
	platform := secretLifetime{validFor: 3 * time.Hour, rotateBefore: 2 * time.Hour}
	refused := &ias.APIError{Operation: "create_api_secret", StatusCode: 500}
	cases := map[string]struct {
		reason    string
		w         world
		calls     []string
		events    []string
		published bool
		ready     corev1.ConditionStatus
		retiring  int
		// rotated is the SecretRotated condition's status ("": not set);
		// rotations the rotation metrics' "succeeded failed" counts.
		rotated   corev1.ConditionStatus
		rotations string
		err       error
		// validTo is how long the new secret is valid, if one is made;
		// neverExpires: the new secret has no expiry.
		validTo      time.Duration
		neverExpires bool
	}{
		"no secretRotation any more, the published secret expires: replaced by one without expiry": {
			reason:    "nothing would replace an expiring secret once no expiry is asked for: it is replaced at once, by one that never expires, before runtimes go back to eventing-auth-manager",
			w:         world{cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour)), ias: oneApp(expiring("s1", "abcd", 10*time.Hour)), conn: conn("abcd")},
			calls:     []string{"create secret sec-1"},
			events:    []string{string(eventNewSecret), string(eventRetiringSecret)},
			published: true, ready: corev1.ConditionTrue, retiring: 1, rotated: corev1.ConditionTrue, rotations: "1 0", neverExpires: true,
		},
		"ProviderConfig's rotation, secret within its rotateBefore: replaced by one valid for its validFor, same app": {
			reason:    "the platform's rotation applies to every resource without its own: the runtime keeps its client ID",
			w:         world{cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour)), rotation: platform, ias: oneApp(expiring("s1", "abcd", 90*time.Minute)), conn: conn("abcd")},
			calls:     []string{"create secret sec-1"},
			events:    []string{string(eventNewSecret), string(eventRetiringSecret)},
			published: true, ready: corev1.ConditionTrue, retiring: 1, rotated: corev1.ConditionTrue, rotations: "1 0", validTo: 3 * time.Hour,
		},
		"ProviderConfig's rotation, a never-expiring secret published longer than validFor - rotateBefore ago: replaced": {
			reason:    "a secret without validTo (made before the setting, or migrated) is due validFor - rotateBefore after it was published",
			w:         world{cr: newCR(withExternalName(appID), publishedAgo("s1", 61*time.Minute)), rotation: platform, ias: oneApp(ourSecret("s1", "abcd")), conn: conn("abcd")},
			calls:     []string{"create secret sec-1"},
			events:    []string{string(eventNewSecret), string(eventRetiringSecret)},
			published: true, ready: corev1.ConditionTrue, retiring: 1, rotated: corev1.ConditionTrue, rotations: "1 0", validTo: 3 * time.Hour,
		},
		"ProviderConfig's rotation, a never-expiring secret published lately: kept, nothing changes at once": {
			reason: "switching the setting on changes no runtime at once",
			w:      world{cr: newCR(withExternalName(appID), publishedAgo("s1", 59*time.Minute)), rotation: platform, ias: oneApp(ourSecret("s1", "abcd")), conn: conn("abcd")},
		},
		"the resource's own validFor without rotateBefore wins over the ProviderConfig's rotation: kept": {
			reason: "a resource's own secret settings win as a whole, even without rotateBefore",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour), func(cr *v1alpha1.IASApplication) {
				cr.Spec.ForProvider.Secret.ValidFor = &metav1.Duration{Duration: 2 * time.Hour}
			}), rotation: platform, ias: oneApp(expiring("s1", "abcd", 10*time.Minute)), conn: conn("abcd")},
		},
		"an expired older secret, a runtime still on it: deleted, since it authenticates nobody": {
			reason: "an expired secret authenticates nobody, so keeping it for a runtime helps no one",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s2", 20*time.Minute)),
				ias: oneApp(expiring("s1", "old1", -time.Second), ourSecret("s2", "abcd")), conn: conn("abcd"), pending: "1 of 1 RuntimeSecrets"},
			calls:  []string{"delete secret s1"},
			events: []string{string(eventDeletedSecret)},
		},
		"an expired older secret within the grace period makes room for a due rotation": {
			reason: "an expired older secret does not block the next rotation",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s2", 5*time.Minute)), rotation: platform,
				ias: oneApp(expiring("s1", "old1", -time.Second), expiring("s2", "abcd", time.Hour)), conn: conn("abcd")},
			calls:     []string{"delete secret s1", "create secret sec-1"},
			events:    []string{string(eventDeletedSecret), string(eventNewSecret), string(eventRetiringSecret)},
			published: true, ready: corev1.ConditionTrue, retiring: 1, rotated: corev1.ConditionTrue, rotations: "1 0", validTo: 3 * time.Hour,
		},
		"drift patched back": {
			reason: "a field changed in IAS by hand is patched back, and only that field",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour)), conn: conn("abcd"),
				ias: &fakeIAS{apps: []ias.Application{{ID: appID, Name: "rt", DisplayName: "other", Description: ownedDescription("ns/rt"), SSOType: ias.SSOTypeOIDC, Type: ias.TypeCharged, ClientID: "client-" + appID}},
					secrets: map[string][]ias.APISecret{appID: {ourSecret("s1", "abcd")}}}},
			calls: []string{"patch " + appID + " /branding/displayName"},
		},
		"rename to a name another app carries: refused": {
			reason: "a rename never takes a name another app carries: the app stays as it is and the error names the other",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour)), conn: conn("abcd"),
				ias: &fakeIAS{apps: []ias.Application{
					{ID: appID, Name: "old-name", DisplayName: "rt", Description: ownedDescription("ns/rt"), SSOType: ias.SSOTypeOIDC, Type: ias.TypeCharged, ClientID: "client-" + appID},
					{ID: "33333333-3333-3333-3333-333333333333", Name: "rt", Description: ownedDescription("other/rt"), Type: ias.TypeCharged}},
					secrets: map[string][]ias.APISecret{appID: {ourSecret("s1", "abcd")}}}},
			err: errors.Errorf(errRenameTaken, "33333333-3333-3333-3333-333333333333", "rt"),
		},
		"connection Secret lost: a new secret published, the old one retiring, Ready at once": {
			reason:    "IAS never shows a secret again: a new one is the only way to credentials, and the old one stays until the runtimes moved on",
			w:         world{cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour)), ias: oneApp(ourSecret("s1", "abcd"))},
			calls:     []string{"create secret sec-1"},
			events:    []string{string(eventNewSecret), string(eventRetiringSecret)},
			published: true, ready: corev1.ConditionTrue, retiring: 1,
		},
		"connection Secret lost with two of ours: the last published kept, the other deleted first": {
			reason: "IAS allows few secrets per app: the one no runtime can hold goes first",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour)),
				ias: oneApp(ourSecret("s1", "abcd"), ourSecret("s2", "efgh"))},
			calls:     []string{"delete secret s2", "create secret sec-1"},
			events:    []string{string(eventDeletedSecret), string(eventNewSecret), string(eventRetiringSecret)},
			published: true, ready: corev1.ConditionTrue, retiring: 1,
		},
		"rotation due: a new secret published, the old one kept": {
			reason:    "rotation overlaps: the old secret works until the runtimes hold the new one",
			w:         world{cr: newCR(withExternalName(appID), rotating, publishedAgo("s1", time.Hour)), ias: oneApp(expiring("s1", "abcd", 30*time.Minute)), conn: conn("abcd")},
			calls:     []string{"create secret sec-1"},
			events:    []string{string(eventNewSecret), string(eventRetiringSecret)},
			published: true, ready: corev1.ConditionTrue, retiring: 1, rotated: corev1.ConditionTrue, rotations: "1 0",
		},
		"rotation due but IAS refuses the new secret: a condition, a Warning event, counted as failed": {
			reason: "a failed rotation is told where a person looks and in the metrics, and the old secret stays",
			w: world{cr: newCR(withExternalName(appID), rotating, publishedAgo("s1", time.Hour)), conn: conn("abcd"),
				ias: func() *fakeIAS {
					f := oneApp(expiring("s1", "abcd", 30*time.Minute))
					f.createSecretErr = refused
					return f
				}()},
			events: []string{string(eventRotationFailed)},
			err:    refused, rotated: corev1.ConditionFalse, rotations: "0 1",
		},
		"rotation due while an older secret still retires: waits, no third secret": {
			reason: "a third secret would exceed what IAS allows, so the rotation waits and says so",
			w: world{cr: newCR(withExternalName(appID), rotating, publishedAgo("s2", 5*time.Minute)),
				ias: oneApp(ourSecret("s1", "old1"), expiring("s2", "abcd", 30*time.Minute)), conn: conn("abcd")},
			events: []string{string(eventRotationWaits)}, retiring: 1, rotated: corev1.ConditionFalse, rotations: "0 0",
		},
		"retired secret due: deleted": {
			reason: "a secret no runtime needs after the grace period is deleted",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s2", 20*time.Minute)),
				ias: oneApp(ourSecret("s1", "old1"), ourSecret("s2", "abcd")), conn: conn("abcd")},
			calls:  []string{"delete secret s1"},
			events: []string{string(eventDeletedSecret)},
		},
		"due retirement makes room for a due rotation": {
			reason: "deleting first keeps the count of secrets within IAS's limit",
			w: world{cr: newCR(withExternalName(appID), rotating, publishedAgo("s2", 20*time.Minute)),
				ias: oneApp(ourSecret("s1", "old1"), expiring("s2", "abcd", 30*time.Minute)), conn: conn("abcd")},
			calls:     []string{"delete secret s1", "create secret sec-1"},
			events:    []string{string(eventDeletedSecret), string(eventNewSecret), string(eventRetiringSecret)},
			published: true, ready: corev1.ConditionTrue, retiring: 1, rotated: corev1.ConditionTrue, rotations: "1 0",
		},
		"a runtime still on the older secret: nothing deleted": {
			reason: "a secret a runtime still holds is never deleted before it expires",
			w: world{cr: newCR(withExternalName(appID), publishedAgo("s2", 20*time.Minute)),
				ias: oneApp(ourSecret("s1", "old1"), ourSecret("s2", "abcd")), conn: conn("abcd"), pending: "1 of 1 RuntimeSecrets"},
			retiring: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, r := tc.w.external(t)
			e.secrets.metrics = secretmetrics.New(nil)
			cr := tc.w.cr
			_, err := e.Update(context.Background(), cr)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s\nUpdate() error: -want +got:\n%s", tc.reason, diff)
			}
			if got := cr.GetCondition(TypeRotation).Status; got != tc.rotated && (tc.rotated != "" || got != corev1.ConditionUnknown) {
				t.Errorf("%s\nSecretRotated = %q, want %q", tc.reason, got, tc.rotated)
			}
			if tc.rotations != "" {
				if got := rotationCounts(t, e.secrets.metrics); got != tc.rotations {
					t.Errorf("%s\nrotations succeeded/failed = %s, want %s", tc.reason, got, tc.rotations)
				}
			}
			if diff := cmp.Diff(tc.calls, tc.w.ias.calls); diff != "" {
				t.Errorf("%s\nIAS changes: -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.events, e.recorder.(*fakes.Events).Reasons()); diff != "" {
				t.Errorf("%s\nevents: -want +got:\n%s", tc.reason, diff)
			}
			if got := len(r.published) > 0; got != tc.published {
				t.Errorf("%s\npublished = %v, want %v", tc.reason, got, tc.published)
			}
			if tc.ready != "" {
				if s := cr.GetCondition(xpv2.TypeReady).Status; s != tc.ready {
					t.Errorf("%s\nReady = %s, want %s", tc.reason, s, tc.ready)
				}
			}
			if got := len(cr.Status.AtProvider.Retiring); got != tc.retiring {
				t.Errorf("%s\nstatus.atProvider.retiring has %d, want %d", tc.reason, got, tc.retiring)
			}
			if tc.validTo != 0 {
				ss := tc.w.ias.secrets[appID]
				if got := ss[len(ss)-1].ValidTo; got == nil || !got.Equal(at.Add(tc.validTo)) {
					t.Errorf("%s\nnew secret valid to %v, want %v", tc.reason, got, at.Add(tc.validTo))
				}
				if got := cr.Status.AtProvider.SecretRotatesAt; got == nil || !got.Equal(&metav1.Time{Time: at.Add(tc.validTo - platform.rotateBefore)}) {
					t.Errorf("%s\nstatus.atProvider.secretRotatesAt = %v, want %v", tc.reason, got, at.Add(tc.validTo-platform.rotateBefore))
				}
			}
			if tc.neverExpires {
				ss := tc.w.ias.secrets[appID]
				if got := ss[len(ss)-1].ValidTo; got != nil {
					t.Errorf("%s\nnew secret valid to %v, want no expiry", tc.reason, got)
				}
			}
			if n := len(tc.w.ias.secrets[appID]); n > maxSecrets {
				t.Errorf("%s\nthe app holds %d secrets of this provider, at most %d allowed", tc.reason, n, maxSecrets)
			}
		})
	}
}

func TestCreateAndDelete(t *testing.T) {
	cases := map[string]struct {
		reason string
		cr     *v1alpha1.IASApplication
		ias    *fakeIAS
		do     func(*external, *v1alpha1.IASApplication) error
		calls  []string
	}{
		"create marks the app as this provider's and makes a secret": {
			reason: "the marker in the description is how the provider later tells its apps from others'",
			cr:     newCR(), ias: &fakeIAS{},
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				c, err := e.Create(context.Background(), cr)
				if err == nil && string(c.ConnectionDetails[v1alpha1.KeyClientSecret]) == "" {
					t.Error("Create() published no client secret")
				}
				if got := e.ias.(*fakeIAS).apps[0].Description; got != ownedDescription("ns/rt") {
					t.Errorf("app description = %q, want the marker with this resource as its owner", got)
				}
				// crossplane-runtime tells of the creation; a replacement's event would be one more write.
				if got := e.recorder.(*fakes.Events).Reasons(); len(got) != 0 {
					t.Errorf("events of a creation: %v, want none of the provider's own", got)
				}
				return err
			},
			calls: []string{"create app rt", "create secret sec-2"},
		},
		"the Observe right after a Create asks IAS nothing": {
			reason: "IAS lists a new app late: what Create learned is trusted until the status records it",
			cr:     newCR(), ias: &fakeIAS{},
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				if _, err := e.Create(context.Background(), cr); err != nil {
					return err
				}
				f := e.ias.(*fakeIAS)
				reads := f.reads
				obs, err := e.Observe(context.Background(), cr)
				if f.reads != reads {
					t.Errorf("Observe() after Create() made %d IAS reads, want none", f.reads-reads)
				}
				if !obs.ResourceExists || !obs.ResourceUpToDate || cr.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
					t.Errorf("Observe() after Create(): %+v, Ready %s", obs, cr.GetCondition(xpv2.TypeReady).Status)
				}
				// Once the status records the secret, the next Observe asks IAS.
				if _, err := e.Observe(context.Background(), cr); err != nil || f.reads == reads {
					t.Errorf("second Observe(): err %v, reads %d", err, f.reads-reads)
				}
				return err
			},
			calls: []string{"create app rt", "create secret sec-2"},
		},
		"a status write lost to a conflict: the Observes that follow ask IAS nothing": {
			reason: "the same when the status did not reach the API server: the external name did",
			cr:     newCR(), ias: &fakeIAS{},
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				if _, err := e.Create(context.Background(), cr); err != nil {
					return err
				}
				f := e.ias.(*fakeIAS)
				reads := f.reads
				// As read back from the API server: the external name is
				// there (a critical annotation), the status is not.
				for range 2 {
					lost := cr.DeepCopy()
					lost.Status.AtProvider.SecretsCheckedAt = nil
					obs, err := e.Observe(context.Background(), lost)
					if err != nil || !obs.ResourceUpToDate || f.reads != reads {
						t.Errorf("Observe() with the status lost: err %v, up to date %v, %d IAS reads; want none", err, obs.ResourceUpToDate, f.reads-reads)
					}
				}
				return nil
			},
			calls: []string{"create app rt", "create secret sec-2"},
		},
		"just created app not yet readable: wait, never create another": {
			reason: "a second app would be a duplicate once IAS lists the first",
			cr: newCR(withExternalName(appID), func(cr *v1alpha1.IASApplication) {
				meta.SetExternalCreateSucceeded(cr, time.Now().Add(-5*time.Second))
			}), ias: &fakeIAS{},
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				_, err := e.Observe(context.Background(), cr)
				want := errors.Errorf(errNotFoundYet, appID, rfc3339(meta.GetExternalCreateSucceeded(cr)))
				if diff := cmp.Diff(want, err, test.EquateErrors()); diff != "" {
					t.Errorf("Observe(): want a wait; -want +got:\n%s", diff)
				}
				return nil
			},
		},
		"observed while deleting: existence only, its secrets are not listed": {
			reason: "a deletion needs to know only that the app is there",
			cr:     newCR(withExternalName(appID), inDeletion), ias: oneApp(ourSecret("s1", "abcd")),
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				obs, err := e.Observe(context.Background(), cr)
				if f := e.ias.(*fakeIAS); f.reads != 1 || !obs.ResourceExists {
					t.Errorf("Observe() while deleting: %d IAS reads, exists %v; want 1 read, exists", f.reads, obs.ResourceExists)
				}
				return err
			},
		},
		"deleting an app observed before: IAS is asked who owns it all the same": {
			reason: "the status may be forged or stale: IAS's owner record decides",
			cr:     newCR(withExternalName(appID), inDeletion, observedAs(appID)), ias: oneApp(ourSecret("s1", "abcd")),
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				obs, err := e.Observe(context.Background(), cr)
				if f := e.ias.(*fakeIAS); f.reads != 1 || !obs.ResourceExists {
					t.Errorf("Observe() while deleting: %d IAS reads, exists %v; want 1, exists", f.reads, obs.ResourceExists)
				}
				return err
			},
		},
		"after its Delete the app is gone without asking IAS again: a read and a delete per deletion": {
			reason: "the Observe after a Delete this process sent trusts it, so a deletion costs IAS two calls",
			cr:     newCR(withExternalName(appID), inDeletion, observedAs(appID)), ias: oneApp(ourSecret("s1", "abcd")),
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				for i, want := range []bool{true, false} {
					obs, err := e.Observe(context.Background(), cr)
					if err != nil {
						return err
					}
					if obs.ResourceExists != want {
						t.Errorf("Observe() #%d while deleting: exists %v, want %v", i+1, obs.ResourceExists, want)
					}
					if obs.ResourceExists {
						if _, err := e.Delete(context.Background(), cr); err != nil {
							return err
						}
					}
				}
				if f := e.ias.(*fakeIAS); f.reads != 1 {
					t.Errorf("deletion made %d IAS reads, want 1", f.reads)
				}
				return nil
			},
			calls: []string{"delete app " + appID},
		},
		"a Delete forgotten by a restart: IAS answers the app is gone, nothing is deleted again": {
			reason: "after a restart IAS is asked, and a gone app is gone",
			cr:     newCR(withExternalName(appID), inDeletion, observedAs(appID)), ias: &fakeIAS{},
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				if obs, err := e.Observe(context.Background(), cr); err != nil || obs.ResourceExists {
					t.Errorf("Observe(): exists %v, err %v; want gone", obs.ResourceExists, err)
				}
				return nil
			},
		},
		"a deletion leaves an app IAS records no owner of, whatever the status says": {
			reason: "an app no resource owns (made by eventing-auth-manager, say) is never deleted by a resource that claims it",
			cr:     newCR(withExternalName(appID), inDeletion, observedAs(appID)),
			ias:    &fakeIAS{apps: []ias.Application{{ID: appID, Name: "rt", Type: ias.TypeCharged}}},
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				if obs, err := e.Observe(context.Background(), cr); err != nil || obs.ResourceExists {
					t.Errorf("Observe(): exists %v, err %v; want left", obs.ResourceExists, err)
				}
				return nil
			},
		},
		"a forged status.atProvider.id deletes nothing: IAS records another owner": {
			reason: "the status is writable by whoever can write the resource: it is not proof of ownership",
			cr:     newCR(withExternalName(appID), inDeletion, observedAs(appID)),
			ias:    &fakeIAS{apps: []ias.Application{{ID: appID, Name: "rt", Type: ias.TypeCharged, Description: ownedDescription("kcp-system/rt")}}},
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				if obs, err := e.Observe(context.Background(), cr); err != nil || obs.ResourceExists {
					t.Errorf("Observe(): exists %v, err %v; want left", obs.ResourceExists, err)
				}
				return nil
			},
		},
		"delete by UUID": {
			reason: "Delete removes the app it owns by its UUID",
			cr:     newCR(withExternalName(appID)), ias: oneApp(),
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				_, err := e.Delete(context.Background(), cr)
				return err
			},
			calls: []string{"delete app " + appID},
		},
		"delete of an app already gone": {
			reason: "a deletion that finds the app gone is done, without an error",
			cr:     newCR(withExternalName(appID)), ias: &fakeIAS{},
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				_, err := e.Delete(context.Background(), cr)
				return err
			},
			calls: []string{"delete app " + appID},
		},
		"delete without UUID touches nothing": {
			reason: "without a UUID there is no app this resource knows to be its own",
			cr:     newCR(), ias: oneApp(),
			do: func(e *external, cr *v1alpha1.IASApplication) error {
				_, err := e.Delete(context.Background(), cr)
				return err
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, _ := world{cr: tc.cr, ias: tc.ias}.external(t)
			if err := tc.do(e, tc.cr); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.calls, tc.ias.calls); diff != "" {
				t.Errorf("%s\nIAS changes: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSteadyPoll: what a routine poll asks IAS, with the tenant's inventory and
// hourly secret checks.
func TestSteadyPoll(t *testing.T) {
	checkedAgo := func(d time.Duration) func(*v1alpha1.IASApplication) {
		return func(cr *v1alpha1.IASApplication) {
			cr.Status.AtProvider.SecretHint = "abcd"
			cr.Status.AtProvider.SecretsCheckedAt = &metav1.Time{Time: at.Add(-d)}
		}
	}
	cases := map[string]struct {
		reason   string
		w        world
		reads    int
		upToDate bool
		ready    corev1.ConditionStatus
	}{
		"app in the inventory, secrets checked 10m ago: the inventory only": {
			reason: "a Ready app costs IAS one shared listing per poll",
			w:      world{steady: true, cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour), checkedAgo(10*time.Minute)), ias: oneApp(ourSecret("s1", "abcd")), conn: conn("abcd")},
			reads:  1, upToDate: true, ready: corev1.ConditionTrue,
		},
		"secrets listed by this process over an hour ago: listed": {
			reason: "secrets are listed at least hourly, to notice one deleted in IAS",
			w: world{steady: true, cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour), checkedAgo(3*time.Hour)), ias: oneApp(ourSecret("s1", "abcd")), conn: conn("abcd"),
				listedAgo: ptr.To(61 * time.Minute)},
			reads: 2, upToDate: true, ready: corev1.ConditionTrue,
		},
		"secrets listed by this process 10m ago, the status says 3h: the inventory only": {
			reason: "this process's own record counts, so a restored status does not cause a listing storm",
			w: world{steady: true, cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour), checkedAgo(3*time.Hour)), ias: oneApp(ourSecret("s1", "abcd")), conn: conn("abcd"),
				listedAgo: ptr.To(10 * time.Minute)},
			reads: 1, upToDate: true, ready: corev1.ConditionTrue,
		},
		"app not in the inventory: looked up by its UUID": {
			reason: "an app the listing missed is read on its own",
			w: world{steady: true, cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour), checkedAgo(10*time.Minute)), conn: conn("abcd"),
				ias: func() *fakeIAS {
					f := oneApp(ourSecret("s1", "abcd"))
					f.unlisted = map[string]bool{appID: true}
					return f
				}()},
			reads: 2, upToDate: true, ready: corev1.ConditionTrue,
		},
		"the connection Secret holds another secret: listed, a new one needed": {
			reason: "a connection Secret that no longer matches means the runtime holds credentials IAS may not accept",
			w:      world{steady: true, cr: newCR(withExternalName(appID), publishedAgo("s1", time.Hour), checkedAgo(10*time.Minute)), ias: oneApp(ourSecret("s1", "abcd")), conn: conn("zzzz")},
			reads:  2, ready: corev1.ConditionFalse,
		},
		"an older secret retiring: listed every poll": {
			reason: "a retiring secret is deleted as soon as it is due, so its app's secrets are read each poll",
			w: world{steady: true, cr: newCR(withExternalName(appID), publishedAgo("s1", time.Minute), checkedAgo(10*time.Minute), func(cr *v1alpha1.IASApplication) {
				cr.Status.AtProvider.Retiring = []v1alpha1.RetiringSecret{{ID: "s0"}}
			}), ias: oneApp(ourSecret("s0", "old0"), ourSecret("s1", "abcd")), conn: conn("abcd")},
			reads: 2, upToDate: true, ready: corev1.ConditionTrue,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, _ := tc.w.external(t)
			obs, err := e.Observe(context.Background(), tc.w.cr)
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if f := tc.w.ias; f.reads != tc.reads {
				t.Errorf("%s\nIAS reads %d, want %d", tc.reason, f.reads, tc.reads)
			}
			if obs.ResourceUpToDate != tc.upToDate || !obs.ResourceExists {
				t.Errorf("%s\nexists %v, up to date %v; want exists, up to date %v", tc.reason, obs.ResourceExists, obs.ResourceUpToDate, tc.upToDate)
			}
			if s := tc.w.cr.GetCondition(xpv2.TypeReady).Status; s != tc.ready {
				t.Errorf("%s\nReady %s, want %s", tc.reason, s, tc.ready)
			}
		})
	}
}

// TestUnansweredCreateComesBackWhenListsSettle: a resource waiting for IAS's
// lists to show the app of a create without answer comes back when they are
// trusted to, not at the workqueue's backoff.
func TestUnansweredCreateComesBackWhenListsSettle(t *testing.T) {
	w := world{cr: newCR(createdAgo(10 * time.Second)), ias: &fakeIAS{}}
	e, _ := w.external(t)
	ctx, hint := breaker.WithRetryHint(context.Background())
	if _, err := e.Observe(ctx, w.cr); err == nil {
		t.Fatal("Observe did not wait for the lists")
	}
	h := hint()
	if want := at.Add(-10*time.Second + time.Minute); !h.At.Equal(want) {
		t.Errorf("retry hint %v, want %v", h.At, want)
	}
}
