package iasapplication

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestObserveDeletion: a resource being deleted finds its app to delete only
// if IAS, asked by its UUID, records the resource as the app's owner; any
// other app is left with an event, and nothing but the GET is sent.
func TestObserveDeletion(t *testing.T) {
	deleting := func(cr *v1alpha1.IASApplication) {
		cr.SetDeletionTimestamp(&metav1.Time{Time: at})
		meta.AddFinalizer(cr, managed.FinalizerName)
	}
	app := func(mod func(*ias.Application)) *fakeIAS {
		a := ourApp(appID, at.Add(-time.Hour))
		mod(&a)
		return &fakeIAS{apps: []ias.Application{a}}
	}
	cases := map[string]struct {
		reason string
		ias    *fakeIAS
		exists bool
		events []string
		err    error
	}{
		"owned": {
			reason: "IAS records this resource as the owner: the app is there to delete",
			ias:    app(func(*ias.Application) {}), exists: true,
		},
		"owned by another": {
			reason: "IAS records another IASApplication as the owner: left to it",
			ias:    app(func(a *ias.Application) { a.Description = ownedDescription("other/rt") }),
			events: []string{string(eventLeftToOwner)},
		},
		"no owner recorded": {
			reason: "an app of eventing-auth-manager, never stamped by this resource: left",
			ias:    app(func(a *ias.Application) { a.Description = "" }),
			events: []string{string(eventLeftToOwner)},
		},
		"gone": {
			reason: "an app IAS no longer has needs no deletion",
			ias:    &fakeIAS{},
		},
		"not charged": {
			reason: "an app of SAP's is never deleted",
			ias:    app(func(a *ias.Application) { a.Type = "bundled" }),
			err:    errors.Errorf(errNotCharged, appIDName(appID, "rt"), "bundled"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := world{cr: newCR(withExternalName(appID), deleting), ias: tc.ias}
			e, _ := w.external(t)
			obs, err := e.Observe(context.Background(), w.cr)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s: Observe() error -want +got:\n%s", tc.reason, diff)
			}
			if obs.ResourceExists != tc.exists {
				t.Errorf("%s: exists %v, want %v", tc.reason, obs.ResourceExists, tc.exists)
			}
			if diff := cmp.Diff(tc.events, e.recorder.(*fakes.Events).Reasons()); diff != "" {
				t.Errorf("%s: events -want +got:\n%s", tc.reason, diff)
			}
			if len(tc.ias.calls) != 0 {
				t.Errorf("%s: IAS was changed: %v", tc.reason, tc.ias.calls)
			}
		})
	}
}
