package iasapplication

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
)

// waiterFake waits for the UUIDs in pending, as a first listing that has not
// shown them yet.
type waiterFake struct {
	pending map[string]bool
	waiting []func()
}

func (w *waiterFake) WhenListed(id string, fn func()) bool {
	if !w.pending[id] {
		return false
	}
	w.waiting = append(w.waiting, fn)
	return true
}

func TestEnqueueWhenListed(t *testing.T) {
	now := metav1.Now()
	cases := map[string]struct {
		reason        string
		externalName  string
		deleted       bool
		inInitialList bool
		wantAtOnce    bool
	}{
		"FirstListAppNotListedYet": {
			reason:       "at start each resource waits for its app's page of the first listing instead of asking IAS on its own",
			externalName: "app-1", inInitialList: true,
		},
		"FirstListAppListedAlready": {
			reason:       "an app whose page came is looked at at once",
			externalName: "app-listed", inInitialList: true, wantAtOnce: true,
		},
		"FirstListNoAppYet": {
			reason:        "a resource without an app has nothing to wait for",
			inInitialList: true, wantAtOnce: true,
		},
		"CreatedAfterTheStart": {
			reason:       "a resource made after the start was not in the first list",
			externalName: "app-1", wantAtOnce: true,
		},
		"BeingDeleted": {
			reason:       "a deletion never waits",
			externalName: "app-1", deleted: true, inInitialList: true, wantAtOnce: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rt"}}
			if tc.externalName != "" {
				meta.SetExternalName(cr, tc.externalName)
			}
			if tc.deleted {
				cr.SetDeletionTimestamp(&now)
			}
			waiter := &waiterFake{pending: map[string]bool{"app-1": true}}
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()

			h := &enqueueWhenListed{listings: waiter}
			h.Create(context.Background(), event.CreateEvent{Object: cr, IsInInitialList: tc.inInitialList}, q)

			if got := q.Len() == 1; got != tc.wantAtOnce {
				t.Fatalf("%s\nqueued at once: %v, want %v", tc.reason, got, tc.wantAtOnce)
			}
			if tc.wantAtOnce {
				return
			}
			if len(waiter.waiting) != 1 {
				t.Fatalf("%s\n%d waits registered, want 1", tc.reason, len(waiter.waiting))
			}
			waiter.waiting[0]() // the page that shows the app came
			if q.Len() != 1 {
				t.Fatal("not queued once its app was listed")
			}
			if req, _ := q.Get(); req.Name != "rt" || req.Namespace != "ns" {
				t.Errorf("%s\nqueued %v, want ns/rt", tc.reason, req)
			}
		})
	}
}
