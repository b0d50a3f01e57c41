package iasapplication

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestConnectionSecretOutlivesKeptResource: a retained deletion releases the
// connection Secret from the garbage collector, and the resource made again
// takes it up as its own, so that the client secret, whose only copy it is,
// survives and goes with the runtime's deletion later. Nothing takes a Secret
// of another resource or one a user made.
func TestConnectionSecretOutlivesKeptResource(t *testing.T) {
	old := newCR(func(cr *v1alpha1.IASApplication) { cr.SetUID("old-uid") })
	made := newCR(func(cr *v1alpha1.IASApplication) { cr.SetUID("new-uid") })
	other := newCR(func(cr *v1alpha1.IASApplication) { cr.SetName("other"); cr.SetUID("other-uid") })
	controlledBy := func(cr *v1alpha1.IASApplication) []metav1.OwnerReference {
		return []metav1.OwnerReference{meta.AsController(meta.TypedReferenceTo(cr, v1alpha1.IASApplicationGroupVersionKind))}
	}
	cases := map[string]struct {
		reason    string
		owners    []metav1.OwnerReference
		typ       corev1.SecretType
		act       func(ctx context.Context, k *secretKeeper) error
		wantOwner []types.UID
	}{
		"ReleasedByItsController": {
			reason: "the kept resource's own Secret is released",
			owners: controlledBy(old),
			act: func(ctx context.Context, k *secretKeeper) error {
				return releaseConnectionSecret(ctx, k.kube, old, "rt-creds")
			},
			wantOwner: nil,
		},
		"NotReleasedForAnother": {
			reason: "a Secret another resource controls is not this resource's to release",
			owners: controlledBy(other),
			act: func(ctx context.Context, k *secretKeeper) error {
				return releaseConnectionSecret(ctx, k.kube, old, "rt-creds")
			},
			wantOwner: []types.UID{"other-uid"},
		},
		"TakenUpAgain": {
			reason: "the resource made again controls the released Secret",
			act: func(ctx context.Context, k *secretKeeper) error {
				return k.adoptConnection(ctx, made, k.getConn(ctx, t))
			},
			wantOwner: []types.UID{"new-uid"},
		},
		"NotTakenFromAnother": {
			reason: "a Secret another resource controls stays its",
			owners: controlledBy(other),
			act: func(ctx context.Context, k *secretKeeper) error {
				return k.adoptConnection(ctx, made, k.getConn(ctx, t))
			},
			wantOwner: []types.UID{"other-uid"},
		},
		"UserSecretNotTaken": {
			reason: "an Opaque Secret with no controller is someone's own, not a connection Secret",
			typ:    corev1.SecretTypeOpaque,
			act: func(ctx context.Context, k *secretKeeper) error {
				return k.adoptConnection(ctx, made, k.getConn(ctx, t))
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			typ := tc.typ
			if typ == "" {
				typ = resource.SecretTypeConnection
			}
			conn := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rt-creds", OwnerReferences: tc.owners}, Type: typ,
				Data: map[string][]byte{v1alpha1.KeyClientSecret: []byte("s3cr3t")}}
			kube := fake.NewClientBuilder().WithScheme(fakes.Scheme()).WithObjects(conn).Build()
			k := &secretKeeper{kube: kube}
			ctx := context.Background()
			if err := tc.act(ctx, k); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			got := k.getConn(ctx, t)
			var owners []types.UID
			for _, r := range got.GetOwnerReferences() {
				owners = append(owners, r.UID)
			}
			if diff := cmp.Diff(tc.wantOwner, owners, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nowners of the connection Secret (-want +got):\n%s", tc.reason, diff)
			}
			if string(got.Data[v1alpha1.KeyClientSecret]) != "s3cr3t" {
				t.Errorf("%s\nthe client secret changed", tc.reason)
			}
		})
	}
}

func (k *secretKeeper) getConn(ctx context.Context, t *testing.T) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := k.kube.Get(ctx, types.NamespacedName{Namespace: "ns", Name: "rt-creds"}, s); err != nil {
		t.Fatal(err)
	}
	return s
}
