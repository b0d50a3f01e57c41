package runtimesecret

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

func TestConnect(t *testing.T) {
	errBoom := errors.New("boom")
	errRefused := errors.New("refused: exec plugins are not allowed")
	kubeconfig := func(data map[string][]byte) test.MockGetFn {
		return test.NewMockGetFn(nil, func(o client.Object) error {
			o.(*corev1.Secret).Data = data
			return nil
		})
	}
	anyRuntime := RuntimeClientsFn(func([]byte) (corev1client.CoreV1Interface, error) { return fake.NewClientset().CoreV1(), nil })
	cases := map[string]struct {
		get        test.MockGetFn
		clients    RuntimeClients
		err        error
		hasRuntime bool
	}{
		"KubeconfigSecretMissing": {
			// Observe decides what a missing kubeconfig means: wait, or the runtime is gone.
			get:     test.NewMockGetFn(kerrors.NewNotFound(corev1.Resource("secrets"), "kubeconfig-rt-1")),
			clients: anyRuntime,
		},
		"KubeconfigSecretUnreadable": {
			get: test.NewMockGetFn(errBoom),
			err: fmt.Errorf(errReadKubeconfig, "kcp/kubeconfig-rt-1", errBoom),
		},
		"KeyMissing": {
			get: kubeconfig(map[string][]byte{"other": []byte("x")}),
			err: fmt.Errorf(errKubeconfigKey, "kcp/kubeconfig-rt-1", "config"),
		},
		"KubeconfigRefused": {
			get:     kubeconfig(map[string][]byte{"config": []byte("kubeconfig")}),
			clients: RuntimeClientsFn(func([]byte) (corev1client.CoreV1Interface, error) { return nil, errRefused }),
			err:     fmt.Errorf(errKubeconfigRefused, "kcp/kubeconfig-rt-1", "config", errRefused),
		},
		"Connected": {
			get:        kubeconfig(map[string][]byte{"config": []byte("kubeconfig")}),
			clients:    anyRuntime,
			hasRuntime: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &connector{kube: &test.MockClient{MockGet: tc.get}, clients: tc.clients, recorder: event.NewNopRecorder()}
			cr := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp"},
				Spec: v1alpha1.RuntimeSecretSpec{ForProvider: v1alpha1.RuntimeSecretParameters{RuntimeID: "rt-1"}}}
			got, err := c.Connect(context.Background(), cr)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("Connect error: -want +got:\n%s", diff)
			}
			if err != nil {
				return
			}
			if e := got.(*external); (e.runtime != nil) != tc.hasRuntime {
				t.Errorf("has a runtime client: %v, want %v", e.runtime != nil, tc.hasRuntime)
			}
		})
	}
}
