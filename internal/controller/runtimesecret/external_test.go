package runtimesecret

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

var creds = map[string][]byte{"client_id": []byte("id"), "client_secret": []byte("SECRET"), "token_url": []byte("t"), "certs_url": []byte("c")}

func withData(d map[string][]byte, k, v string) map[string][]byte {
	out := map[string][]byte{}
	for key, val := range d {
		out[key] = val
	}
	if v == "" {
		delete(out, k)
	} else {
		out[k] = []byte(v)
	}
	return out
}

func TestDifferences(t *testing.T) {
	cases := map[string]struct {
		reason string
		typ    corev1.SecretType
		data   map[string][]byte
		want   []string
	}{
		"Equal": {
			reason: "a Secret that holds the credentials has no differences",
			typ:    corev1.SecretTypeOpaque, data: creds,
		},
		"Value": {
			reason: "a changed value names its key, never the value",
			typ:    corev1.SecretTypeOpaque, data: withData(creds, "client_secret", "OTHER"), want: []string{"data client_secret"},
		},
		"Missing": {
			reason: "an emptied key is a difference",
			typ:    corev1.SecretTypeOpaque, data: withData(creds, "certs_url", ""), want: []string{"data certs_url"},
		},
		"Extra": {
			reason: "a key the provider does not write is a difference: the eventing manager reads the Secret as a whole",
			typ:    corev1.SecretTypeOpaque, data: withData(creds, "x", "y"), want: []string{"data x"},
		},
		"TypeAndKey": {
			reason: "a changed type is named along with a changed key",
			typ:    "kubernetes.io/basic-auth", data: withData(creds, "token_url", "u"), want: []string{`type "kubernetes.io/basic-auth"`, "data token_url"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := differences(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Labels: v1alpha1.SecretLabels()}, Type: tc.typ, Data: tc.data}, creds)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ndifferences(): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestHash(t *testing.T) {
	h := v1alpha1.DataHash(creds)
	if h != v1alpha1.DataHash(withData(creds, "client_id", "id")) {
		t.Error("equal data hashed differently")
	}
	if h == v1alpha1.DataHash(withData(creds, "client_secret", "OTHER")) {
		t.Error("different data hashed equally")
	}
	// Moving bytes between key and value must change the digest.
	if v1alpha1.DataHash(map[string][]byte{"ab": []byte("c")}) == v1alpha1.DataHash(map[string][]byte{"a": []byte("bc")}) {
		t.Error("key/value boundary is not part of the digest")
	}
	if strings.Contains(h, "SECRET") || !strings.HasPrefix(h, "sha256:") {
		t.Errorf("unexpected digest %q", h)
	}
}

func TestObserve(t *testing.T) {
	scheme := fakes.Scheme()
	rs := func(p v1alpha1.RuntimeSecretParameters) *v1alpha1.RuntimeSecret {
		p.RuntimeID = "rt-1"
		return &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp"}, Spec: v1alpha1.RuntimeSecretSpec{ForProvider: p}}
	}
	credsSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "kcp"}, Data: creds}
	notReady := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "kcp"}}
	notReady.SetConditions(xpv2.Creating())
	target := func(labels map[string]string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eventing-webhook-auth", Namespace: "kyma-system", Labels: labels}, Type: corev1.SecretTypeOpaque, Data: data}
	}
	ours := v1alpha1.SecretLabels()
	unwatched := map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedBy}
	byRef := v1alpha1.RuntimeSecretParameters{CredentialsSecretRef: &xpv2.LocalSecretReference{Name: "creds"}}

	cases := map[string]struct {
		reason    string
		cr        *v1alpha1.RuntimeSecret
		mgmt      []runtime.Object
		onRuntime []runtime.Object
		noRuntime bool // the kubeconfig Secret is missing
		exists    bool
		upToDate  bool
		err       error
		ready     corev1.ConditionStatus
		readyMsg  string
	}{
		"KubeconfigMissing": {reason: "without the runtime's kubeconfig there is nothing to write to: it waits, saying for what", cr: rs(byRef), noRuntime: true, exists: true, upToDate: true,
			ready: corev1.ConditionFalse, readyMsg: `Waiting for the kubeconfig Secret kcp/kubeconfig-rt-1 (key "config")`},
		"ApplicationNotReady": {reason: "credentials from an IASApplication that is not Ready yet are waited for", cr: rs(v1alpha1.RuntimeSecretParameters{ApplicationRef: &xpv2.NamespacedReference{Name: "app"}, CredentialsSecretRef: &xpv2.LocalSecretReference{Name: "creds"}}),
			mgmt: []runtime.Object{notReady, credsSecret}, exists: true, upToDate: true,
			ready: corev1.ConditionFalse, readyMsg: "Waiting for the IASApplication app to become Ready"},
		"CredentialsMissing": {reason: "a credentials Secret that does not exist yet is waited for", cr: rs(byRef), exists: true, upToDate: true,
			ready: corev1.ConditionFalse, readyMsg: "Waiting for the credentials Secret kcp/creds"},
		"CredentialsIncomplete": {reason: "a credentials Secret without all four keys is waited for, naming the missing ones", cr: rs(byRef),
			mgmt:   []runtime.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "kcp"}, Data: withData(creds, "client_secret", "")}},
			exists: true, upToDate: true, ready: corev1.ConditionFalse, readyMsg: "Waiting for the credentials Secret kcp/creds to hold the keys client_secret"},
		// Made by Update, without crossplane-runtime's creation records.
		"TargetMissing": {reason: "a Secret not yet on the runtime is made by Update, without crossplane-runtime's creation records", cr: rs(byRef), mgmt: []runtime.Object{credsSecret},
			exists: true, ready: corev1.ConditionFalse, readyMsg: "Creating Secret kyma-system/eventing-webhook-auth on runtime rt-1"},
		// Policies that do not allow Update leave creating to crossplane-runtime.
		"TargetMissingNoUpdate":    {reason: "policies that do not allow Update leave the creation to crossplane-runtime", cr: withPolicies(rs(byRef), xpv2.ManagementActionObserve, xpv2.ManagementActionCreate), mgmt: []runtime.Object{credsSecret}},
		"TargetMissingObserveOnly": {reason: "an observe-only policy reports the Secret missing and makes nothing", cr: withPolicies(rs(byRef), xpv2.ManagementActionObserve), mgmt: []runtime.Object{credsSecret}},
		"InSync": {reason: "a Secret that holds what it should is Ready and up to date", cr: rs(byRef), mgmt: []runtime.Object{credsSecret}, onRuntime: []runtime.Object{target(ours, creds)},
			exists: true, upToDate: true, ready: corev1.ConditionTrue},
		"Drifted": {reason: "a Secret with other data is restored, saying which key differs but not its value", cr: rs(byRef), mgmt: []runtime.Object{credsSecret}, onRuntime: []runtime.Object{target(ours, withData(creds, "client_secret", "OLD"))},
			exists: true, ready: corev1.ConditionFalse, readyMsg: "differs (data client_secret); restoring it"},
		"NotWatched": {reason: "a Secret without the runtime-watcher's label is restored", cr: rs(byRef), mgmt: []runtime.Object{credsSecret}, onRuntime: []runtime.Object{target(unwatched, creds)},
			exists: true, ready: corev1.ConditionFalse, readyMsg: "differs (label " + v1alpha1.LabelWatchedBy + "); restoring it"},
		"NotOurs": {reason: "a Secret the provider did not make is left alone, with an error", cr: rs(byRef), mgmt: []runtime.Object{credsSecret}, onRuntime: []runtime.Object{target(nil, creds)},
			err: errors.Errorf(errNotOurs, "kyma-system/eventing-webhook-auth", "rt-1"), ready: corev1.ConditionFalse, readyMsg: "it is left alone"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := &external{
				watcher:       NoWatcher{},
				kube:          crfake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(tc.mgmt...).Build(),
				recorder:      event.NewNopRecorder(),
				kubeconfig:    "kcp/kubeconfig-rt-1",
				kubeconfigKey: "config",
			}
			if !tc.noRuntime {
				e.runtime = fake.NewClientset(tc.onRuntime...).CoreV1()
			}
			obs, err := e.Observe(context.Background(), tc.cr)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s: Observe() error: -want +got:\n%s", tc.reason, diff)
			}
			if obs.ResourceExists != tc.exists || obs.ResourceUpToDate != tc.upToDate {
				t.Errorf("%s: exists %v upToDate %v, want %v %v", tc.reason, obs.ResourceExists, obs.ResourceUpToDate, tc.exists, tc.upToDate)
			}
			c := tc.cr.GetCondition(xpv2.TypeReady)
			if tc.ready != "" && (c.Status != tc.ready || !strings.Contains(c.Message, tc.readyMsg)) {
				t.Errorf("%s: Ready %s %q, want %s containing %q", tc.reason, c.Status, c.Message, tc.ready, tc.readyMsg)
			}
			if strings.Contains(c.Message+obs.Diff, "SECRET") {
				t.Errorf("secret value in condition or diff")
			}
		})
	}
}

// TestObserveDeletion: a RuntimeSecret being deleted finds its Secret to
// delete only on a runtime that answers and only if the Secret is the
// provider's; it never waits for its inputs (credentials, application).
func TestObserveDeletion(t *testing.T) {
	deleting := func() *v1alpha1.RuntimeSecret {
		return &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp", UID: "rs-uid", DeletionTimestamp: &metav1.Time{Time: time.Now()}},
			Spec: v1alpha1.RuntimeSecretSpec{ForProvider: v1alpha1.RuntimeSecretParameters{RuntimeID: "rt-1",
				ApplicationRef: &xpv2.NamespacedReference{Name: "gone"}}}}
	}
	target := func(labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eventing-webhook-auth", Namespace: "kyma-system", Labels: labels}, Data: creds}
	}
	cases := map[string]struct {
		reason    string
		onRuntime []runtime.Object
		noRuntime bool // the kubeconfig Secret is gone
		deletedBy bool // this process deleted it in the reconcile before
		exists    bool
		events    []string
	}{
		"ours": {
			reason:    "the provider's Secret is there to delete, though the application it was made from is gone",
			onRuntime: []runtime.Object{target(v1alpha1.SecretLabels())}, exists: true,
		},
		"gone": {
			reason: "a Secret that is not there needs no deletion",
		},
		"not ours": {
			reason:    "a Secret the provider did not make is left, and an event says so",
			onRuntime: []runtime.Object{target(nil)}, events: []string{string(eventLeftUnmanaged)},
		},
		"runtime gone": {
			reason:    "with its kubeconfig Secret gone the runtime is taken to be gone with its Secret",
			noRuntime: true, events: []string{string(eventRuntimeGone)},
		},
		"deleted by this process": {
			reason:    "the reconcile before deleted it: the runtime is not asked again",
			onRuntime: []runtime.Object{target(v1alpha1.SecretLabels())}, deletedBy: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := &fakes.Events{}
			e := &external{watcher: NoWatcher{}, recorder: rec, kubeconfig: "kcp/kubeconfig-rt-1", deleted: newDeletedSecrets(),
				unreachableDeletion: time.Hour, now: time.Now}
			if !tc.noRuntime {
				e.runtime = fake.NewClientset(tc.onRuntime...).CoreV1()
			}
			cr := deleting()
			if tc.deletedBy {
				e.deleted.add(cr.GetUID())
			}
			obs, err := e.Observe(context.Background(), cr)
			if err != nil {
				t.Fatalf("%s: Observe(): %v", tc.reason, err)
			}
			if obs.ResourceExists != tc.exists {
				t.Errorf("%s: exists %v, want %v", tc.reason, obs.ResourceExists, tc.exists)
			}
			if diff := cmp.Diff(tc.events, rec.Reasons()); diff != "" {
				t.Errorf("%s: events -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func withPolicies(cr *v1alpha1.RuntimeSecret, p ...xpv2.ManagementAction) *v1alpha1.RuntimeSecret {
	cr.SetManagementPolicies(p)
	return cr
}

// BenchmarkCompare is what each poll of an unchanged runtime Secret costs beyond
// the two GETs: the comparison and the digest for status.
func BenchmarkCompare(b *testing.B) {
	cur := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Labels: v1alpha1.SecretLabels()}, Type: corev1.SecretTypeOpaque, Data: withData(creds, "client_id", "id")}
	b.ReportAllocs()
	for b.Loop() {
		if len(differences(cur, creds)) != 0 || v1alpha1.DataHash(cur.Data) == "" {
			b.Fatal("unexpected difference")
		}
	}
}

// TestObserveDeletionOfUnreachableRuntime: a deletion waits for a runtime that
// does not answer until its time is up, then completes with a Warning event.
func TestObserveDeletionOfUnreachableRuntime(t *testing.T) {
	deletedAt := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	unreachable := &breaker.Error{Kind: breaker.Runtime, Target: "rt:443", Cause: "timeout", Next: deletedAt}
	forbidden := kerrors.NewForbidden(corev1.Resource("secrets"), "x", nil)
	cases := map[string]struct {
		reason  string
		err     error
		after   time.Duration
		exists  bool
		wantErr error
		event   string
	}{
		"UnreachableWithinTheTime": {
			reason: "a runtime that does not answer may come back: the deletion waits, and the error says until when",
			err:    unreachable, after: 30 * time.Minute,
			wantErr: withNote(errors.Wrapf(unreachable, errReadOnRuntime, "kyma-system/eventing-webhook-auth", "rt-1"), fmt.Sprintf(noteDeletion, "2026-01-01T13:00:00Z")),
		},
		"UnreachableTimeIsUp": {
			reason: "once the time is up the runtime is taken to be gone, and a Warning event says the Secret may be left on it",
			err:    unreachable, after: time.Hour, event: string(eventGaveUpOnRuntime),
		},
		"RuntimeAnswersAnError": {
			reason: "a runtime that answers, though with an error, is not gone: no time limit ends the wait",
			err:    forbidden, after: 2 * time.Hour,
			wantErr: errors.Wrapf(forbidden, errReadOnRuntime, "kyma-system/eventing-webhook-auth", "rt-1"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewClientset()
			cs.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
			rec := &fakes.Events{}
			e := &external{recorder: rec, runtime: cs.CoreV1(), unreachableDeletion: time.Hour, watcher: NoWatcher{},
				now: func() time.Time { return deletedAt.Add(tc.after) }}
			cr := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp", DeletionTimestamp: &metav1.Time{Time: deletedAt}},
				Spec: v1alpha1.RuntimeSecretSpec{ForProvider: v1alpha1.RuntimeSecretParameters{RuntimeID: "rt-1"}}}
			obs, err := e.Observe(context.Background(), cr)
			if diff := cmp.Diff(tc.wantErr, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s\nObserve() error: -want +got:\n%s", tc.reason, diff)
			}
			if obs.ResourceExists != tc.exists {
				t.Errorf("%s\nexists %v, want %v", tc.reason, obs.ResourceExists, tc.exists)
			}
			if tc.event != "" && !slices.Contains(rec.Reasons(), tc.event) {
				t.Errorf("%s\nevents %v, want %s", tc.reason, rec.Reasons(), tc.event)
			}
		})
	}
}
