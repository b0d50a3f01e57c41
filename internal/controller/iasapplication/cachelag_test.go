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

// TestCatchUpReadsOnlyAfterACreate: a resource without an external name is
// read again from the API server, in case the cache lags behind the record of
// a create, only when a create may have happened: one recorded on it, or one
// this process sent lately. A new resource's first Observe costs no read.
func TestCatchUpReadsOnlyAfterACreate(t *testing.T) {
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
			o.catchUp(context.Background(), tc.cr.DeepCopy())
			if r.gets != tc.wantReads {
				t.Errorf("%s\nreads from the API server: %d, want %d", tc.reason, r.gets, tc.wantReads)
			}
		})
	}
}

// TestObserveCatchesUpWithItsOwnCreate: the reconcile a Create requeues may
// read the resource from a cache that does not hold the Create's record yet.
// Observe then works from the API server's copy: it knows the app, and the
// writes after it carry the resource's current version instead of failing
// on a conflict and backing off. A resource of the same name made again
// since is another resource: nothing of it is taken.
func TestObserveCatchesUpWithItsOwnCreate(t *testing.T) {
	cases := map[string]struct {
		reason      string
		sameUID     bool
		wantCurrent bool
	}{
		"TheSameResource": {
			reason:  "the API server holds this resource's record of its create",
			sameUID: true, wantCurrent: true,
		},
		"ANamesakeMadeSince": {
			reason: "the record belongs to a resource of the same name made after this one",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stored := newCR(withExternalName(appID), func(cr *v1alpha1.IASApplication) {
				meta.SetExternalCreatePending(cr, at)
				meta.SetExternalCreateSucceeded(cr, at)
			})
			e, _ := world{cr: stored, conn: conn("abcd"), ias: oneApp(ourSecret("s1", "abcd"))}.external(t)
			current := &v1alpha1.IASApplication{}
			if err := e.ownership.reader.Get(context.Background(), client.ObjectKeyFromObject(stored), current); err != nil {
				t.Fatal(err)
			}
			// What a lagging cache holds: the pending create, not its result.
			cached := newCR(func(cr *v1alpha1.IASApplication) { meta.SetExternalCreatePending(cr, at) })
			cached.SetUID("an-earlier-resource")
			if tc.sameUID {
				cached.SetUID(current.GetUID())
			}
			cached.SetResourceVersion("1")

			e.ownership.catchUp(context.Background(), cached)
			caughtUp := cached.GetResourceVersion() == current.GetResourceVersion() && meta.GetExternalName(cached) == appID
			if caughtUp != tc.wantCurrent {
				t.Errorf("%s\nresource version %q, external name %q after catching up; want the API server's (%q, %q): %t",
					tc.reason, cached.GetResourceVersion(), meta.GetExternalName(cached), current.GetResourceVersion(), appID, tc.wantCurrent)
			}
			if !tc.sameUID {
				return
			}
			obs, err := e.Observe(context.Background(), cached)
			if err != nil || !obs.ResourceExists {
				t.Errorf("%s\nObserve: exists %t, error %v; want the app the Create made", tc.reason, obs.ResourceExists, err)
			}
		})
	}
}
