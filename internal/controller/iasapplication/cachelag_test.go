package iasapplication

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
)

// countingReader counts the reads that bypass the cache.
type countingReader struct {
	client.Reader
	gets int
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets++
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestFindReadsFreshOnlyAfterACreate: a resource without an external name is
// read again from the API server, in case the cache lags behind the record of
// a create, only when a create may have happened: one recorded on it, or one
// this process sent lately. A new resource's first Observe costs no read.
func TestFindReadsFreshOnlyAfterACreate(t *testing.T) {
	cases := map[string]struct {
		reason    string
		cr        *v1alpha1.IASApplication
		sentByUs  bool
		wantReads int
	}{
		"ANewResource": {
			reason: "a resource that never sent a create has nothing IAS may list late",
			cr:     newCR(),
		},
		"AfterACreateThisProcessSent": {
			reason: "IAS may not list an app it just made: it is read",
			cr:     newCR(), sentByUs: true, wantReads: 1,
		},
		"ACreateRecordedAsPending": {
			reason: "the same for a create another process recorded as pending",
			cr:     newCR(func(cr *v1alpha1.IASApplication) { meta.SetExternalCreatePending(cr, at) }), wantReads: 1,
		},
		"ACreateRecordedAsFailed": {
			reason: "a create recorded as failed may still have made the app",
			cr:     newCR(func(cr *v1alpha1.IASApplication) { meta.SetExternalCreateFailed(cr, at) }), wantReads: 1,
		},
		"ACreateWithoutAnswer": {
			reason: "the same for a create that got no answer",
			cr: newCR(func(cr *v1alpha1.IASApplication) {
				meta.AddAnnotations(cr, map[string]string{apis.AnnotationUnconfirmedCreate: at.Format("2006-01-02T15:04:05Z07:00")})
			}), wantReads: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, _ := world{cr: tc.cr, ias: &fakeIAS{}}.external(t)
			o := e.ownership
			r := &countingReader{Reader: o.reader}
			o.reader = r
			if tc.sentByUs {
				o.created.noteCreateSent(tc.cr.GetUID(), o.now())
			}
			// A create recorded without its app listed yet is an error of its
			// own (lifecycle_test.go); only the reads matter here.
			_, _, _ = o.find(context.Background(), tc.cr.DeepCopy()) //nolint:errcheck // See above.
			if r.gets != tc.wantReads {
				t.Errorf("%s\nreads from the API server: %d, want %d", tc.reason, r.gets, tc.wantReads)
			}
		})
	}
}
