package migrate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestBack: the way back hands a runtime to eventing-auth-manager only once the
// provider let go of it (its deletion keeping the app and the Secret), only
// with a secret the operator can keep, and then makes the operator's
// EventingAuth and CRD and drops the kept connection Secret, leaving the
// runtime's Secret and IAS as they are.
func TestBack(t *testing.T) {
	later := time.Now().Add(24 * time.Hour)
	providers := ias.APISecret{ID: "s2", Hint: "abcd", ClientID: clientID, Description: iasv1alpha1.DefaultSecretDescription}
	app := ias.Application{ID: appID, Name: id, ClientID: clientID}
	composed := func(o client.Object) client.Object {
		o.SetNamespace(ns)
		o.SetName(id)
		o.SetLabels(map[string]string{xcrd.LabelKeyNamePrefixForComposed: id})
		return o
	}
	cases := map[string]struct {
		reason     string
		mgmt       []client.Object
		secrets    []ias.APISecret
		onRuntime  *corev1.Secret
		installed  bool // the EventingAuth definition is installed
		wantErr    string
		want       Outcome
		wantDetail string
		handedBack bool
		// keepsComposite: the provider's EventingAuth stays.
		keepsComposite bool
	}{
		"Installed": {
			reason:    "while the EventingAuth definition is installed the kyma bridge would make everything again: refused",
			installed: true, wantErr: "Remove it first",
		},
		"HandedBack": {
			reason:  "a runtime the provider let go of, with a secret that never expires, is handed back",
			secrets: []ias.APISecret{providers}, onRuntime: runtimeSecret(goodData()),
			want: Completed, wantDetail: "it finds the runtime's Secret", handedBack: true,
		},
		"CompositeStillThere": {
			reason:  "the provider's EventingAuth is deleted, and the runtime waits for the provider to let go",
			mgmt:    []client.Object{composite()},
			secrets: []ias.APISecret{providers}, onRuntime: runtimeSecret(goodData()),
			want: Waiting, wantDetail: "the provider's EventingAuth to go",
		},
		"ComposedResourceStillThere": {
			reason:  "a composed resource not yet gone is waited for",
			mgmt:    []client.Object{composed(&runtimev1alpha1.RuntimeSecret{})},
			secrets: []ias.APISecret{providers}, onRuntime: runtimeSecret(goodData()),
			want: Waiting, wantDetail: "the provider to let go of RuntimeSecret",
		},
		"HandMade": {
			reason:  "a hand-made IASApplication would delete the app when deleted: left alone",
			mgmt:    []client.Object{func() client.Object { a := &iasv1alpha1.IASApplication{}; a.SetNamespace(ns); a.SetName(id); return a }()},
			secrets: []ias.APISecret{providers}, onRuntime: runtimeSecret(goodData()),
			want: LeftAlone, wantDetail: "the hand-made IASApplication",
		},
		"SecretExpires": {
			reason:    "the operator never renews a secret: one that expires is not handed back, and the provider keeps serving it",
			mgmt:      []client.Object{composite()},
			secrets:   []ias.APISecret{{ID: "s2", Hint: "abcd", ClientID: clientID, Description: iasv1alpha1.DefaultSecretDescription, ValidTo: &later}},
			onRuntime: runtimeSecret(goodData()),
			want:      LeftAlone, wantDetail: "eventing-auth-manager never renews a secret", keepsComposite: true,
		},
		"NoSecretOnTheRuntime": {
			reason:  "without a Secret the operator would make a new app: left alone",
			secrets: []ias.APISecret{providers},
			want:    LeftAlone, wantDetail: "holds no Secret",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := append([]client.Object{}, tc.mgmt...)
			objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id + "-ias"}, Type: "connection.crossplane.io/v1alpha1"})
			if tc.installed {
				objs = append(objs, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: compositeCRD}})
			}
			kube := providerCluster(t, objs...)
			var rt []runtime.Object
			if tc.onRuntime != nil {
				tc.onRuntime.Labels = runtimev1alpha1.SecretLabels()
				rt = append(rt, tc.onRuntime)
			}
			runtimes := k8sfake.NewClientset(rt...)
			var got []Result
			o := Options{Kube: kube, IAS: &fakeIAS{apps: []ias.Application{app}, secrets: tc.secrets}, Runtimes: oneRuntime{core: runtimes.CoreV1()},
				Namespace: ns, Report: func(r Result) { got = append(got, r) }}
			_, err := Back(context.Background(), o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nBack() = %v, want an error saying %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if len(got) != 1 || got[0].Outcome != tc.want || !strings.Contains(got[0].Detail, tc.wantDetail) {
				t.Fatalf("%s\ngot %+v, want %q with %q", tc.reason, got, tc.want, tc.wantDetail)
			}
			old := oldEventingAuthOf(id)
			if handed := exists(t, kube, old); handed != tc.handedBack {
				t.Errorf("%s\neventing-auth-manager's EventingAuth made: %t, want %t", tc.reason, handed, tc.handedBack)
			}
			if tc.handedBack {
				if c := metav1.GetControllerOf(old); c == nil || c.Kind != eventingauth.KymaKind.Kind || c.Name != id {
					t.Errorf("%s\neventing-auth-manager's EventingAuth is not controlled by its Kyma CR: %v", tc.reason, old.GetOwnerReferences())
				}
				conn := &corev1.Secret{}
				if err := kube.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id + "-ias"}, conn); err != nil {
					t.Fatalf("%s\nthe kept connection Secret, for the way forward, went: %v", tc.reason, err)
				}
				if metav1.GetControllerOf(conn) != nil || len(conn.OwnerReferences) != 1 || conn.OwnerReferences[0].UID != "kyma-uid" {
					t.Errorf("%s\nthe kept connection Secret does not go with the Kyma CR alone: %v", tc.reason, conn.OwnerReferences)
				}
				if !exists(t, kube, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "eventingauths.operator.kyma-project.io"}}) {
					t.Errorf("%s\neventing-auth-manager's CRD is not restored", tc.reason)
				}
			}
			if tc.keepsComposite && !exists(t, kube, composite()) {
				t.Errorf("%s\nthe provider's EventingAuth of a runtime left alone was deleted", tc.reason)
			}
			if tc.onRuntime != nil {
				s, err := runtimes.CoreV1().Secrets("kyma-system").Get(context.Background(), "eventing-webhook-auth", metav1.GetOptions{})
				if err != nil || string(s.Data["client_secret"]) != value || s.ResourceVersion != tc.onRuntime.ResourceVersion {
					t.Errorf("%s\nthe runtime's Secret changed: %v", tc.reason, err)
				}
			}
		})
	}
}

// providerCluster holds runtime-a's Kyma CR and kubeconfig as the provider
// serves it, and objs.
func providerCluster(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	kyma := &unstructured.Unstructured{}
	kyma.SetGroupVersionKind(eventingauth.KymaKind)
	kyma.SetNamespace(ns)
	kyma.SetName(id)
	kyma.SetUID("kyma-uid")
	kc := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kubeconfig-" + id}, Data: map[string][]byte{"config": []byte("k")}}
	return fake.NewClientBuilder().WithScheme(fakes.Scheme(apiextensionsv1.AddToScheme)).WithObjects(append([]client.Object{kyma, kc}, objs...)...).Build()
}

func oldEventingAuthOf(name string) *unstructured.Unstructured {
	old := &unstructured.Unstructured{}
	old.SetGroupVersionKind(OperatorEventingAuthGroupVersionKind)
	old.SetNamespace(ns)
	old.SetName(name)
	return old
}
