package runtimesecret

import (
	"context"
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
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
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
	next := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	failed := xpv2.ReconcileError(&breaker.Error{Kind: breaker.Runtime, Target: "https://rt-1.example", Cause: "timeout", Next: next})
	failed.LastTransitionTime = metav1.NewTime(next.Add(-40 * time.Second))
	cases := map[string]struct {
		reason     string
		get        test.MockGetFn
		clients    RuntimeClients
		synced     xpv2.Condition
		err        error
		hasRuntime bool
		// clientErr is what the first call to the runtime meets: the
		// client is built then, not at Connect.
		clientErr error
		recalled  []breaker.Failure
	}{
		"KubeconfigSecretMissing": {
			reason:  "Observe decides what a missing kubeconfig means (wait, or the runtime is gone), so Connect does not fail",
			get:     test.NewMockGetFn(kerrors.NewNotFound(corev1.Resource("secrets"), "kubeconfig-rt-1")),
			clients: anyRuntime,
		},
		"KubeconfigSecretUnreadable": {
			reason: "a kubeconfig Secret that cannot be read fails Connect, naming the Secret",
			get:    test.NewMockGetFn(errBoom),
			err:    errors.Wrapf(errBoom, errReadKubeconfig, "kcp/kubeconfig-rt-1"),
		},
		"KeyMissing": {
			reason: "a kubeconfig Secret without the key fails Connect, naming the Secret and the key",
			get:    kubeconfig(map[string][]byte{"other": []byte("x")}),
			err:    errors.Errorf(errKubeconfigKey, "kcp/kubeconfig-rt-1", "config"),
		},
		"KubeconfigRefused": {
			reason:     "a kubeconfig the provider refuses fails the first call to the runtime, not Connect: Observe still handles a deletion",
			get:        kubeconfig(map[string][]byte{"config": []byte("kubeconfig")}),
			clients:    RuntimeClientsFn(func([]byte) (corev1client.CoreV1Interface, error) { return nil, errRefused }),
			hasRuntime: true,
			clientErr:  errors.Wrapf(errRefused, errKubeconfigRefused, "kcp/kubeconfig-rt-1", "config"),
		},
		"Connected": {
			reason:     "a usable kubeconfig gives a client, built at the first call",
			get:        kubeconfig(map[string][]byte{"config": []byte("kubeconfig")}),
			clients:    anyRuntime,
			synced:     xpv2.ReconcileSuccess(),
			hasRuntime: true,
		},
		"RuntimeFailedWhenLastTried": {
			reason:     "after a restart the runtime's circuit opens as the Synced condition recorded, at the first call",
			get:        kubeconfig(map[string][]byte{"config": []byte("kubeconfig")}),
			clients:    anyRuntime,
			synced:     failed,
			hasRuntime: true,
			recalled:   []breaker.Failure{{Target: "https://rt-1.example", Cause: "timeout", Next: next, At: next.Add(-40 * time.Second)}},
		},
		"OtherError": {
			reason:     "a Synced error that is not the runtime's failure opens no circuit",
			get:        kubeconfig(map[string][]byte{"config": []byte("kubeconfig")}),
			clients:    anyRuntime,
			synced:     xpv2.ReconcileError(errBoom),
			hasRuntime: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clients := &recallingClients{RuntimeClients: tc.clients}
			c := &connector{kube: &test.MockClient{MockGet: tc.get}, clients: clients, recorder: event.NewNopRecorder()}
			cr := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp"},
				Spec: v1alpha1.RuntimeSecretSpec{ForProvider: v1alpha1.RuntimeSecretParameters{RuntimeID: "rt-1"}}}
			cr.SetConditions(tc.synced)
			got, err := c.Connect(context.Background(), cr)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s\nConnect() error: -want +got:\n%s", tc.reason, diff)
			}
			if err != nil {
				return
			}
			e := got.(*external)
			if (e.kubeconfigData != nil) != tc.hasRuntime {
				t.Errorf("%s\nhas a kubeconfig: %v, want %v", tc.reason, e.kubeconfigData != nil, tc.hasRuntime)
			}
			if len(clients.recalled) > 0 {
				t.Errorf("%s\nrecalled into a circuit before any call to the runtime: %v", tc.reason, clients.recalled)
			}
			if !tc.hasRuntime {
				return
			}
			_, err = e.secrets(context.Background(), "kyma-system")
			if diff := cmp.Diff(tc.clientErr, err, test.EquateErrors()); diff != "" {
				t.Errorf("%s\nfirst call's client error: -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.recalled, clients.recalled); diff != "" {
				t.Errorf("%s\nrecalled failures: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// recallingClients records the failures recalled into its circuits.
type recallingClients struct {
	RuntimeClients
	recalled []breaker.Failure
}

func (r *recallingClients) Recall(_ context.Context, _ []byte, f breaker.Failure) {
	r.recalled = append(r.recalled, f)
}
