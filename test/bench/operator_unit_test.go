package bench

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestInNamespace(t *testing.T) {
	cases := map[string]struct{ path, want string }{
		"a Secret":          {"api/v1/namespaces/kyma-system/secrets/eventing-webhook-auth", "api/v1/namespaces/rt-1/secrets/eventing-webhook-auth"},
		"the Secrets":       {"api/v1/namespaces/kyma-system/secrets", "api/v1/namespaces/rt-1/secrets"},
		"the namespace":     {"api/v1/namespaces/kyma-system", "api/v1/namespaces/rt-1"},
		"another namespace": {"api/v1/namespaces/kyma-system-2/secrets", "api/v1/namespaces/kyma-system-2/secrets"},
		"discovery":         {"api/v1", "api/v1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := inNamespace(tc.path, "rt-1"); got != tc.want {
				t.Errorf("inNamespace(%q) = %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

func TestObjectInNamespace(t *testing.T) {
	secret := func(namespace string) *corev1.Secret {
		return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "eventing-webhook-auth", Namespace: namespace}}
	}
	asProtobuf := func(o runtime.Object) []byte {
		b, err := runtime.Encode(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), o)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	asJSON := func(o runtime.Object) []byte {
		b, err := runtime.Encode(scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion), o)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := map[string]struct {
		body  []byte
		moved bool
	}{
		"protobuf in kyma-system": {asProtobuf(secret("kyma-system")), true},
		"JSON in kyma-system":     {asJSON(secret("kyma-system")), true},
		"elsewhere":               {asJSON(secret("default")), false},
		"not an object":           {[]byte("{"), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, moved := objectInNamespace(tc.body, "kyma-system", "rt-1")
			if moved != tc.moved {
				t.Fatalf("moved = %v, want %v", moved, tc.moved)
			}
			if !moved {
				return
			}
			got := &corev1.Secret{}
			if err := runtime.DecodeInto(scheme.Codecs.UniversalDecoder(), out, got); err != nil {
				t.Fatal(err)
			}
			if got.Namespace != "rt-1" || got.Name != "eventing-webhook-auth" {
				t.Errorf("got %s/%s, want rt-1/eventing-webhook-auth", got.Namespace, got.Name)
			}
		})
	}
}
