package kube

import (
	"bytes"
	"context"
	"maps"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestSkipEmptyConnectionSecrets publishes as crossplane-runtime's managed
// reconciler does for a new IASApplication: nothing before the app exists,
// then its details, then the same again.
func TestSkipEmptyConnectionSecrets(t *testing.T) {
	scheme := fakes.Scheme()
	app := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", UID: "u1"}}
	app.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "app-ias"})
	details := managed.ConnectionDetails{"client_id": []byte("id"), "client_secret": []byte("s3cr3t")}
	rotated := managed.ConnectionDetails{"client_id": []byte("id"), "client_secret": []byte("n3w")}

	cases := map[string]struct {
		reason     string
		publish    []managed.ConnectionDetails
		wantWrites int
		// wantData is what the Secret holds at the end; nil: no Secret.
		wantData map[string][]byte
	}{
		"NothingToPublishYet": {reason: "no details means no Secret yet, and no write", publish: []managed.ConnectionDetails{nil}},
		"TheFirstDetailsMakeTheSecret": {
			reason:     "the first details make the Secret",
			publish:    []managed.ConnectionDetails{nil, details},
			wantWrites: 1,
			wantData:   details,
		},
		"TheSameDetailsAgainWriteNothing": {
			reason:     "details the Secret holds already cost no write",
			publish:    []managed.ConnectionDetails{nil, details, details},
			wantWrites: 1,
			wantData:   details,
		},
		"NothingToPublishOnceMadeWritesNothing": {
			reason:     "an Observe that finds the Secret as it should be returns no details; crossplane-runtime's publisher would patch it with no data",
			publish:    []managed.ConnectionDetails{details, nil},
			wantWrites: 1,
			wantData:   details,
		},
		"ChangedDetailsAreWritten": {
			reason:     "new details (a rotated secret) are written",
			publish:    []managed.ConnectionDetails{details, nil, rotated},
			wantWrites: 2,
			wantData:   rotated,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			writes := 0
			count := func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				writes++
				return c.Create(ctx, obj, opts...)
			}
			countPatch := func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				writes++
				return c.Patch(ctx, obj, p, opts...)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).
				WithInterceptorFuncs(interceptor.Funcs{Create: count, Patch: countPatch}).Build()
			p := managed.NewAPILocalSecretPublisher(SkipEmptyConnectionSecrets(c), scheme)
			for _, d := range tc.publish {
				if _, err := p.PublishConnection(context.Background(), app, d); err != nil {
					t.Fatalf("%s\n%v", tc.reason, err)
				}
			}
			if writes != tc.wantWrites {
				t.Errorf("%s\nwrites %d, want %d", tc.reason, writes, tc.wantWrites)
			}
			s := &corev1.Secret{}
			err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "app-ias"}, s)
			switch {
			case tc.wantData == nil && !kerrors.IsNotFound(err):
				t.Errorf("%s\na connection Secret was made: %v", tc.reason, err)
			case tc.wantData != nil && err != nil:
				t.Fatalf("%s\nno connection Secret: %v", tc.reason, err)
			case tc.wantData != nil && !maps.EqualFunc(s.Data, tc.wantData, bytes.Equal):
				t.Errorf("%s\nthe connection Secret holds other data than published last (keys %d, want %d)", tc.reason, len(s.Data), len(tc.wantData))
			}
		})
	}
}
