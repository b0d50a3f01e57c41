package migrate

import (
	"context"
	"errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

const (
	ns       = "kcp-system"
	id       = "runtime-a"
	appID    = "11111111-2222-3333-4444-555555555555"
	clientID = "client-id-a"
	value    = "abcdSECRETVALUE"
)

// fakeIAS answers the two reads the migration makes.
type fakeIAS struct {
	ias.Client // not called
	apps       []ias.Application
	secrets    []ias.APISecret
}

func (f *fakeIAS) FindApplications(context.Context, string) ([]ias.Application, error) {
	return f.apps, nil
}

func (f *fakeIAS) ListAPISecrets(context.Context, string) ([]ias.APISecret, error) {
	return f.secrets, nil
}

// oneRuntime hands out the same runtime for every kubeconfig.
type oneRuntime struct{ core corev1client.CoreV1Interface }

func (r oneRuntime) For([]byte) (corev1client.CoreV1Interface, error) { return r.core, nil }

func runtimeSecret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kyma-system", Name: "eventing-webhook-auth"}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func goodData() map[string]string {
	return map[string]string{"client_id": clientID, "client_secret": value, "token_url": "https://t/oauth2/token", "certs_url": "https://t/oauth2/certs"}
}

// TestMigrateOneDecides: what a dry run says of one runtime in each state.
func TestMigrateOneDecides(t *testing.T) {
	ours := ias.APISecret{ID: "s1", Hint: "abcd", ClientID: clientID, Description: OperatorSecretDescription}
	app := ias.Application{ID: appID, Name: id, ClientID: clientID}
	cases := map[string]struct {
		reason     string
		apps       []ias.Application
		secrets    []ias.APISecret
		onRuntime  *corev1.Secret
		mgmt       []client.Object
		want       Outcome
		wantDetail string
	}{
		"FitsAndWouldBePrepared": {
			reason: "a runtime whose app, secret and runtime Secret match is taken over as it is",
			apps:   []ias.Application{app}, secrets: []ias.APISecret{ours}, onRuntime: runtimeSecret(goodData()),
			want: WouldPrepare, wantDetail: "taking over IAS application " + appID + " and client secret abcd…",
		},
		"NoApp": {
			reason:  "without its app there is nothing to take over",
			secrets: []ias.APISecret{ours}, onRuntime: runtimeSecret(goodData()),
			want: LeftAlone, wantDetail: "there is no IAS application named " + id,
		},
		"TwoApps": {
			reason: "with two apps of its name the migration cannot tell which is the runtime's",
			apps:   []ias.Application{app, {ID: "other", Name: id}}, onRuntime: runtimeSecret(goodData()),
			want: LeftAlone, wantDetail: "2 IAS applications are named " + id,
		},
		"RuntimeSecretMissing": {
			reason: "without the runtime's Secret there is no credential to keep",
			apps:   []ias.Application{app}, secrets: []ias.APISecret{ours},
			want: LeftAlone, wantDetail: "is missing on the runtime",
		},
		"RuntimeSecretHoldsAnotherSecret": {
			reason: "a runtime Secret that matches no secret of the app holds credentials IAS does not know",
			apps:   []ias.Application{app}, secrets: []ias.APISecret{ours},
			onRuntime: runtimeSecret(map[string]string{"client_id": clientID, "client_secret": "zzzzOTHER", "token_url": "u", "certs_url": "u"}),
			want:      LeftAlone, wantDetail: "matches 0 of IAS application",
		},
		"RuntimeSecretNotOfTheOperatorsShape": {
			reason: "only the operator's Opaque Secret with its four keys is taken over",
			apps:   []ias.Application{app}, secrets: []ias.APISecret{ours},
			onRuntime: runtimeSecret(map[string]string{"client_id": clientID, "client_secret": value}),
			want:      LeftAlone, wantDetail: "is not the Opaque Secret with keys",
		},
		"SecretNotMarkedByTheOperator": {
			reason: "a secret someone else made is not the operator's to hand on",
			apps:   []ias.Application{app}, secrets: []ias.APISecret{{ID: "s1", Hint: "abcd", Description: "someone else"}},
			onRuntime: runtimeSecret(goodData()),
			want:      LeftAlone, wantDetail: "matches 0 of IAS application",
		},
		"ConnectionSecretWithOtherCredentials": {
			reason: "a connection Secret with other credentials would overwrite the runtime's",
			apps:   []ias.Application{app}, secrets: []ias.APISecret{ours}, onRuntime: runtimeSecret(goodData()),
			mgmt: []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id + "-ias"}, Data: map[string][]byte{"client_id": []byte("x")}}},
			want: LeftAlone, wantDetail: "holds other credentials than the runtime",
		},
		"EventingAuthTheProviderMadeAlone": {
			reason: "a runtime the provider serves itself waits for the provider, which has not composed it yet",
			apps:   []ias.Application{app}, secrets: []ias.APISecret{ours}, onRuntime: runtimeSecret(goodData()),
			mgmt: []client.Object{composite()},
			want: Waiting, wantDetail: "served by the provider with an app and a secret of its own; waiting for the provider to compose IASApplication",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var rt []runtime.Object
			if tc.onRuntime != nil {
				rt = append(rt, tc.onRuntime)
			}
			o := Options{
				Kube:      managementCluster(t, tc.mgmt...),
				IAS:       &fakeIAS{apps: tc.apps, secrets: tc.secrets},
				Runtimes:  oneRuntime{core: k8sfake.NewClientset(rt...).CoreV1()},
				Namespace: ns,
				Operator:  neverRan(),
				DryRun:    true,
			}
			var got []Result
			o.Report = func(r Result) { got = append(got, r) }
			if _, err := Run(context.Background(), o); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if len(got) != 1 || got[0].Outcome != tc.want || !strings.Contains(got[0].Detail, tc.wantDetail) {
				t.Fatalf("%s\ngot %+v, want %q with %q", tc.reason, got, tc.want, tc.wantDetail)
			}
		})
	}
}

// TestRunRefusesWhileTheOperatorRuns: nothing is looked at while
// eventing-auth-manager still has replicas.
func TestRunRefusesWhileTheOperatorRuns(t *testing.T) {
	signs := DefaultOperatorSigns()
	op := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: signs.Namespace, Name: signs.Deployment}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)}}
	o := Options{Kube: managementCluster(t, op), Namespace: ns, Operator: signs}
	_, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "docs/migration.md") {
		t.Fatalf("error %v, want a refusal that says how to remove the operator", err)
	}
}

// neverRan are the default signs of the operator, with the user's word that
// it never ran here.
func neverRan() OperatorSigns {
	s := DefaultOperatorSigns()
	s.NeverRan = true
	return s
}

// TestRunStopsWhenTheOperatorComesBack: an operator that shows again after
// the first look (a GitOps sync restores it) stops the run before its next
// change: nothing more is written, and the error says why.
func TestRunStopsWhenTheOperatorComesBack(t *testing.T) {
	signs := neverRan()
	back := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: signs.Namespace, Name: signs.Deployment}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)}}
	kube := managementCluster(t)
	looks := 0
	watched := interceptor.NewClient(kube.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*appsv1.DeploymentList); ok {
				looks++
				if looks > 1 {
					// Restored by a sync right after the first look.
					_ = c.Create(ctx, back.DeepCopy())
				}
			}
			return c.List(ctx, list, opts...)
		},
	})
	rt := k8sfake.NewClientset(runtimeSecret(goodData()))
	o := Options{
		Kube:      watched,
		IAS:       &fakeIAS{apps: []ias.Application{{ID: appID, Name: id, ClientID: clientID}}, secrets: []ias.APISecret{{ID: "s1", Hint: value[:4], Description: OperatorSecretDescription}}},
		Runtimes:  oneRuntime{core: rt.CoreV1()},
		Namespace: ns,
		Operator:  signs,
		Recheck:   time.Nanosecond,
	}
	_, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "came back while the migration ran") || !strings.Contains(err.Error(), "has replicas") {
		t.Fatalf("Run() = %v, want it stopped, naming the operator's return", err)
	}
	if exists(t, kube, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id + "-ias"}}) || exists(t, kube, composite()) {
		t.Errorf("the migration changed the runtime after the operator came back")
	}
	onRuntime, _ := rt.CoreV1().Secrets("kyma-system").Get(context.Background(), "eventing-webhook-auth", metav1.GetOptions{})
	if len(onRuntime.Labels) > 0 {
		t.Errorf("the runtime's Secret was labelled after the operator came back: %v", onRuntime.Labels)
	}
}

func exists(t *testing.T, kube client.Client, o client.Object) bool {
	t.Helper()
	err := kube.Get(context.Background(), client.ObjectKeyFromObject(o), o)
	if err != nil && !kerrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestRunFinishesWhatTheProviderServes: a runtime the kyma bridge composed
// before any migration (the operator had not served it, or failed on it) ends
// Ready and migrated: its Secret, which the provider leaves alone as not its
// own, is labelled, and once the provider shows it Ready eventing-auth-manager's
// EventingAuth goes.
func TestRunFinishesWhatTheProviderServes(t *testing.T) {
	ready := func(o interface {
		client.Object
		SetConditions(...xpv2.Condition)
	}) client.Object {
		o.SetNamespace(ns)
		o.SetName(id)
		o.SetConditions(xpv2.Available())
		return o
	}
	refused := func(o interface {
		client.Object
		SetConditions(...xpv2.Condition)
	}) client.Object {
		o.SetNamespace(ns)
		o.SetName(id)
		o.SetConditions(xpv2.ReconcileError(errors.New("Secret kyma-system/eventing-webhook-auth on runtime runtime-a was not created by this provider")))
		return o
	}
	cases := map[string]struct {
		reason    string
		onRuntime *corev1.Secret
		mrs       []client.Object
		want      Outcome
		labelled  bool
		oldGone   bool
	}{
		"OperatorSecretLeftByTheProvider": {
			reason:    "the operator's Secret, which the provider refuses as not its own, is labelled for it once the app is Ready",
			onRuntime: runtimeSecret(goodData()),
			mrs:       []client.Object{ready(&iasv1alpha1.IASApplication{}), refused(&runtimev1alpha1.RuntimeSecret{})},
			want:      Prepared, labelled: true,
		},
		"AppNotReadyYet": {
			reason:    "the runtime is not touched before the provider has credentials for it",
			onRuntime: runtimeSecret(goodData()),
			want:      Waiting,
		},
		"AppFails": {
			reason:    "an IASApplication that fails (two apps of the name) needs a person: left alone with its message",
			onRuntime: runtimeSecret(goodData()),
			mrs:       []client.Object{refused(&iasv1alpha1.IASApplication{})},
			want:      LeftAlone,
		},
		"NotServedByTheOperator": {
			reason: "no Secret on the runtime: the provider writes one; until it shows the runtime Ready the old object waits",
			mrs:    []client.Object{ready(&iasv1alpha1.IASApplication{})},
			want:   Waiting,
		},
		"ServedAndReady": {
			reason:    "the provider shows the runtime Ready: eventing-auth-manager's EventingAuth goes",
			onRuntime: runtimeSecret(goodData()),
			mrs:       []client.Object{ready(&iasv1alpha1.IASApplication{}), ready(&runtimev1alpha1.RuntimeSecret{})},
			want:      Completed, oldGone: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var rt []runtime.Object
			if tc.onRuntime != nil {
				if tc.oldGone {
					tc.onRuntime.Labels = runtimev1alpha1.SecretLabels()
				}
				rt = append(rt, tc.onRuntime)
			}
			runtimes := k8sfake.NewClientset(rt...)
			kube := managementCluster(t, append([]client.Object{composite()}, tc.mrs...)...)
			var got []Result
			o := Options{Kube: kube, IAS: &fakeIAS{}, Runtimes: oneRuntime{core: runtimes.CoreV1()}, Namespace: ns, Operator: neverRan(),
				Report: func(r Result) { got = append(got, r) }}
			if _, err := Run(context.Background(), o); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if len(got) != 1 || got[0].Outcome != tc.want {
				t.Fatalf("%s\ngot %+v, want %q", tc.reason, got, tc.want)
			}
			if tc.onRuntime != nil && !tc.oldGone {
				s, err := runtimes.CoreV1().Secrets("kyma-system").Get(context.Background(), "eventing-webhook-auth", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if labelled := s.Labels[runtimev1alpha1.LabelManagedBy] == runtimev1alpha1.ManagedBy; labelled != tc.labelled {
					t.Errorf("%s\nthe runtime's Secret labelled: %t, want %t", tc.reason, labelled, tc.labelled)
				}
				if string(s.Data["client_secret"]) != value {
					t.Errorf("%s\nthe runtime's credentials changed", tc.reason)
				}
			}
			old := &unstructured.Unstructured{}
			old.SetGroupVersionKind(OperatorEventingAuthGroupVersionKind)
			old.SetNamespace(ns)
			old.SetName(id)
			if gone := !exists(t, kube, old); gone != tc.oldGone {
				t.Errorf("%s\neventing-auth-manager's EventingAuth gone: %t, want %t", tc.reason, gone, tc.oldGone)
			}
		})
	}
}

// managementCluster holds the Kyma CR, the old EventingAuth and the kubeconfig
// of runtime-a, and objs.
func managementCluster(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := fakes.Scheme()
	kyma := &unstructured.Unstructured{}
	kyma.SetGroupVersionKind(eventingauth.KymaKind)
	kyma.SetNamespace(ns)
	kyma.SetName(id)
	old := &unstructured.Unstructured{}
	old.SetGroupVersionKind(OperatorEventingAuthGroupVersionKind)
	old.SetNamespace(ns)
	old.SetName(id)
	old.SetFinalizers([]string{OperatorFinalizer})
	_ = unstructured.SetNestedField(old.Object, appID, "status", "iasApplication", "uuid")
	kc := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kubeconfig-" + id}, Data: map[string][]byte{"config": []byte("k")}}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(append([]client.Object{kyma, old, kc}, objs...)...).Build()
}

func composite() *unstructured.Unstructured {
	xr := &unstructured.Unstructured{}
	xr.SetGroupVersionKind(eventingauth.Kind)
	xr.SetNamespace(ns)
	xr.SetName(id)
	return xr
}
