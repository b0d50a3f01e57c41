package runtimesecret

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// TestObserveAfterOwnDeletion: the observation crossplane-runtime makes after
// a successful Delete finds the Secret gone without asking the runtime, when
// this process deleted it; otherwise the runtime is asked.
func TestObserveAfterOwnDeletion(t *testing.T) {
	cases := map[string]struct {
		reason    string
		deleteErr error
		// otherUID: the next observation is of another RuntimeSecret of the
		// same name (deleted and made again).
		otherUID  bool
		wantAsked bool
		wantGone  bool
	}{
		"DeletedByThisProcess": {
			reason:   "a Secret this process deleted is known to be gone: the runtime is not asked again",
			wantGone: true,
		},
		"DeleteFailed": {
			reason:    "a deletion that failed proves nothing: the runtime is asked",
			deleteErr: kerrors.NewInternalError(errors.New("runtime down")), wantAsked: true,
		},
		"AnotherRuntimeSecret": {
			reason:   "a RuntimeSecret made again under the same name did not delete anything: the runtime is asked",
			otherUID: true, wantAsked: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eventing-webhook-auth", Namespace: "kyma-system",
				Labels: v1alpha1.SecretLabels(), UID: "s1"}, Type: corev1.SecretTypeOpaque, Data: creds}
			cs := fake.NewClientset(secret)
			if tc.deleteErr != nil {
				cs.PrependReactor("delete", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.deleteErr })
			}
			deleted := newDeletedSecrets()
			reconcile := func() *external {
				return &external{recorder: event.NewNopRecorder(), runtime: cs.CoreV1(), deleted: deleted, watcher: NoWatcher{},
					unreachableDeletion: time.Hour, now: time.Now}
			}
			cr := func(uid string) *v1alpha1.RuntimeSecret {
				return &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp", UID: types.UID(uid),
					DeletionTimestamp: &metav1.Time{Time: time.Now()}},
					Spec: v1alpha1.RuntimeSecretSpec{ForProvider: v1alpha1.RuntimeSecretParameters{RuntimeID: "rt-1"}}}
			}

			first := reconcile()
			if obs, err := first.Observe(context.Background(), cr("u1")); err != nil || !obs.ResourceExists {
				t.Fatalf("first Observe: exists %v, err %v; want the Secret found", obs.ResourceExists, err)
			}
			_, _ = first.Delete(context.Background(), cr("u1"))
			if tc.deleteErr == nil {
				// Gone on the runtime, as after any deletion.
				if _, err := cs.CoreV1().Secrets("kyma-system").Get(context.Background(), "eventing-webhook-auth", metav1.GetOptions{}); err == nil {
					t.Fatal("the Secret is still on the runtime after Delete")
				}
			}
			calls := len(cs.Actions())

			uid := "u1"
			if tc.otherUID {
				uid = "u2"
			}
			obs, err := reconcile().Observe(context.Background(), cr(uid))
			asked := len(cs.Actions()) > calls
			if asked != tc.wantAsked {
				t.Errorf("%s\nruntime asked again: %v, want %v", tc.reason, asked, tc.wantAsked)
			}
			if tc.wantGone && (err != nil || obs.ResourceExists) {
				t.Errorf("%s\nsecond Observe: exists %v, err %v; want gone", tc.reason, obs.ResourceExists, err)
			}
		})
	}
}
