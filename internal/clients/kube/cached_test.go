package kube

import (
	"context"
	"errors"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// informersOf serves one informer, or an error, for any kind.
type informersOf struct {
	cache.Informers
	informer cache.Informer
	err      error
}

func (i informersOf) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return i.informer, i.err
}

// storeless is an informer that keeps no store to read.
type storeless struct{ cache.Informer }

// TestReadCached: the objects read are the cache's own, not copies, and an
// informer that cannot be read says so.
func TestReadCached(t *testing.T) {
	held := []*v1alpha1.RuntimeSecret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}},
	}
	withObjects := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, &v1alpha1.RuntimeSecret{}, 0, toolscache.Indexers{})
	for _, o := range held {
		if err := withObjects.GetStore().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	errBoom := errors.New("boom")
	cases := map[string]struct {
		reason    string
		informers cache.Informers
		want      []*v1alpha1.RuntimeSecret
		err       error
	}{
		"TheCachesOwnObjects": {
			reason:    "Every object the informer holds is read where it is held, not copied.",
			informers: informersOf{informer: withObjects},
			want:      held,
		},
		"NoInformer": {
			reason:    "An informer the cache cannot give is an error.",
			informers: informersOf{err: errBoom},
			err:       errBoom,
		},
		"NoStore": {
			reason:    "An informer without a store to read is an error, not an empty reading.",
			informers: informersOf{informer: storeless{}},
			err:       errNoStore,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReadCached(tc.informers, &v1alpha1.RuntimeSecret{})(context.Background())
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s\nReadCached(): -want error, +got error:\n%s", tc.reason, diff)
			}
			same := map[client.Object]bool{}
			for _, o := range got {
				same[o] = true
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%s\nReadCached(): %d objects, want %d", tc.reason, len(got), len(tc.want))
			}
			for _, o := range tc.want {
				if !same[o] {
					t.Errorf("%s\nReadCached(): %s is not the cache's own object", tc.reason, o.Name)
				}
			}
		})
	}
}
