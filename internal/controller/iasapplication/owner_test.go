package iasapplication

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// ownedBy is an app of this provider that the resource owner owns.
func ownedBy(owner string) ias.Application {
	a := ourApp(appID, at)
	a.Description = ownedDescription(owner)
	return a
}

func handingOverTo(to string) func(*v1alpha1.IASApplication) {
	return func(cr *v1alpha1.IASApplication) {
		meta.AddAnnotations(cr, map[string]string{apis.AnnotationHandOverTo: to})
	}
}

// TestOneOwner: an app another IASApplication owns is never adopted, patched,
// given a secret or deleted through this one, however it names the app; this
// one gets an error naming the owner and sends IAS nothing but reads. An app
// that names no owner, or this one, is its to manage.
func TestOneOwner(t *testing.T) {
	legacy := ourApp(appID, at)
	legacy.Description = ias.AppMarker
	operators := ourApp(appID, at)
	operators.Description = ""
	cases := map[string]struct {
		reason string
		cr     *v1alpha1.IASApplication
		in     ias.Application
		// wantConflict: Observe says the owner; else it finds the app.
		wantConflict string
		// wantExists when the resource is being deleted.
		deleting   bool
		wantExists bool
		wantEvents []string
	}{
		"ByNameOwnedInAnotherNamespace": {
			reason: "an app found by name that another namespace's resource owns is not taken: one namespace never reaches into another's state",
			cr:     newCR(), in: ownedBy("tenant-a/rt"), wantConflict: "tenant-a/rt",
		},
		"ByUUIDOwnedInAnotherNamespace": {
			reason: "naming another's app by its UUID does not make it this resource's",
			cr:     newCR(withExternalName(appID)), in: ownedBy("tenant-a/rt"), wantConflict: "tenant-a/rt",
		},
		"ByUUIDOwnedByAnotherName": {
			reason: "the same within one namespace: one owner per app",
			cr:     newCR(withExternalName(appID)), in: ownedBy("ns/other"), wantConflict: "ns/other",
		},
		"RecordedAsObservedOwnedByOther": {
			reason: "a status that records the app as observed is no proof of ownership",
			cr:     newCR(withExternalName(appID), observedAs(appID)), in: ownedBy("tenant-a/rt"), wantConflict: "tenant-a/rt",
		},
		"DeletingOwnedByAnother": {
			reason: "a deletion leaves another's app to its owner, and says so",
			cr:     newCR(withExternalName(appID)), in: ownedBy("tenant-a/rt"), deleting: true, wantEvents: []string{string(eventLeftToOwner)},
		},
		"OwnedByThisResource": {
			reason: "owners are recorded by namespace and name, so a resource made again finds its app",
			cr:     newCR(), in: ownedBy("ns/rt"),
		},
		"MarkerWithoutOwner": {
			reason: "an app of this provider made before owners were recorded is taken",
			cr:     newCR(), in: legacy,
		},
		"EventingAuthManagersApp": {
			reason: "an app no resource owns yet, as eventing-auth-manager's, is taken by a resource its ProviderConfig admits",
			cr:     newCR(withExternalName(appID)), in: operators,
		},
		"DeletingOwnApp": {
			reason: "a resource deletes its own app",
			cr:     newCR(withExternalName(appID)), in: ownedBy("ns/rt"), deleting: true, wantExists: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.deleting {
				inDeletion(tc.cr)
			}
			fake := &fakeIAS{apps: []ias.Application{tc.in}}
			e, _ := world{cr: tc.cr, ias: fake}.external(t)
			obs, err := e.Observe(context.Background(), tc.cr)
			switch {
			case tc.wantConflict != "":
				want := &OwnerConflictError{App: appIDName(appID, tc.in.Name), Owner: tc.wantConflict, Self: "ns/rt"}
				if diff := cmp.Diff(error(want), err, test.EquateErrors()); diff != "" {
					t.Fatalf("%s\nObserve() error: -want +got:\n%s", tc.reason, diff)
				}
				if meta.GetExternalName(tc.cr) != "" && meta.GetExternalName(tc.cr) != appID || tc.cr.Status.AtProvider.ID != "" {
					t.Errorf("%s\nexternal name %q, status id %q: want nothing recorded of another's app", tc.reason, meta.GetExternalName(tc.cr), tc.cr.Status.AtProvider.ID)
				}
			case err != nil:
				t.Fatalf("%s\nObserve() = %v", tc.reason, err)
			case tc.deleting && obs.ResourceExists != tc.wantExists:
				t.Fatalf("%s\nObserve() while deleting: exists %v, want %v", tc.reason, obs.ResourceExists, tc.wantExists)
			}
			if tc.wantConflict != "" || (tc.deleting && !tc.wantExists) {
				// The reconciler calls nothing else; nothing in IAS changed.
				if len(fake.calls) != 0 {
					t.Errorf("%s\nIAS changes %v, want none", tc.reason, fake.calls)
				}
				if diff := cmp.Diff(tc.wantEvents, e.recorder.(*fakes.Events).Reasons()); diff != "" {
					t.Errorf("%s\nevents: -want +got:\n%s", tc.reason, diff)
				}
			}
		})
	}
}

// TestHandOver: the owner hands its app over by annotation: it records the
// target in IAS, keeps no record of the app, and then only reads it; its
// deletion leaves the app to the target.
func TestHandOver(t *testing.T) {
	cr := newCR(withExternalName(appID), observedAs(appID), handingOverTo("tenant-b/rt"))
	fake := &fakeIAS{apps: []ias.Application{ownedBy("ns/rt")}}
	target := newCR(withExternalName(appID))
	target.Namespace = "tenant-b"
	e, _ := world{cr: cr, ias: fake, others: []*v1alpha1.IASApplication{target}}.external(t)
	obs, err := e.Observe(context.Background(), cr)
	if err != nil || obs.ResourceUpToDate {
		t.Fatalf("Observe() = %+v, %v; want the app found and not up to date", obs, err)
	}
	if _, err := e.Update(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	if want := []string{"patch " + appID + " /description"}; !cmp.Equal(want, fake.calls) {
		t.Errorf("IAS changes %v, want %v", fake.calls, want)
	}
	if got := fake.apps[0].Description; got != ownedDescription("tenant-b/rt") {
		t.Errorf("description %q, want the target recorded", got)
	}
	if cr.Status.AtProvider.ID != "" {
		t.Errorf("status id %q after the hand-over, want none", cr.Status.AtProvider.ID)
	}
	fake.calls = nil
	if _, err := e.Observe(context.Background(), cr); !errors.As(err, new(*OwnerConflictError)) {
		t.Errorf("Observe() after the hand-over = %v, want a conflict", err)
	}
	inDeletion(cr)
	if obs, err := e.Observe(context.Background(), cr); err != nil || obs.ResourceExists {
		t.Errorf("Observe() of the old owner's deletion = %+v, %v; want gone for it", obs, err)
	}
	// After a restart or on a new leader, with nothing remembered and the
	// status naming the app again (stale, or forged): IAS decides.
	observedAs(appID)(cr)
	fresh, _ := world{cr: cr, ias: fake}.external(t)
	if obs, err := fresh.Observe(context.Background(), cr); err != nil || obs.ResourceExists {
		t.Errorf("Observe() of the old owner's deletion by a new process = %+v, %v; want gone for it", obs, err)
	}
	if len(fake.calls) != 0 {
		t.Errorf("IAS changes after the hand-over %v, want none", fake.calls)
	}

	// The target, in another namespace, now manages it.
	e, _ = world{cr: target, ias: fake}.external(t)
	if _, err := e.Observe(context.Background(), target); err != nil {
		t.Errorf("Observe() of the target = %v", err)
	}
}

// TestHandOverNeedsTheTargetsClaim: an owner cannot push its app onto a
// resource that does not name it; nothing changes in IAS until it does.
func TestHandOverNeedsTheTargetsClaim(t *testing.T) {
	elsewhere := newCR(func(cr *v1alpha1.IASApplication) {
		cr.Namespace, cr.Spec.ForProvider.Name = "tenant-b", "another-runtime"
	})
	cases := map[string]struct {
		reason string
		others []*v1alpha1.IASApplication
		want   error
	}{
		"NoTarget": {
			reason: "A target that does not exist never receives the app.",
			want:   errors.Errorf(errHandOverUnclaimed, appIDName(appID, "rt"), "tenant-b/rt", "it does not exist"),
		},
		"TargetNamesAnotherApp": {
			reason: "A target that names another app never receives this one.",
			others: []*v1alpha1.IASApplication{elsewhere},
			want: errors.Errorf(errHandOverUnclaimed, appIDName(appID, "rt"), "tenant-b/rt",
				`its forProvider.name is "another-runtime" and its external name ""`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := newCR(withExternalName(appID), observedAs(appID), handingOverTo("tenant-b/rt"))
			fake := &fakeIAS{apps: []ias.Application{ownedBy("ns/rt")}}
			e, _ := world{cr: cr, ias: fake, others: tc.others}.external(t)
			_, err := e.Update(context.Background(), cr)
			if diff := cmp.Diff(tc.want, err, test.EquateErrors()); diff != "" {
				t.Errorf("%s\nUpdate(): -want +got:\n%s", tc.reason, diff)
			}
			if len(fake.calls) != 0 {
				t.Errorf("%s\nIAS changes %v, want none", tc.reason, fake.calls)
			}
		})
	}
}

// TestHandOverTargetChecked: a hand-over annotation that names no resource is
// an error, and nothing is sent to IAS.
func TestHandOverTargetChecked(t *testing.T) {
	cases := map[string]struct {
		reason, to string
	}{
		"empty":         {"an empty annotation names no resource", ""},
		"no namespace":  {"a name alone leaves the namespace open", "rt"},
		"three parts":   {"a resource is named by two parts", "a/b/c"},
		"bad namespace": {"a namespace is a DNS label", "Bad_NS/rt"},
		"no name":       {"a namespace alone names no resource", "ns/"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := newCR(withExternalName(appID), handingOverTo(tc.to))
			fake := &fakeIAS{apps: []ias.Application{ownedBy("ns/rt")}}
			e, _ := world{cr: cr, ias: fake}.external(t)
			_, err := e.Observe(context.Background(), cr)
			if diff := cmp.Diff(errors.Errorf(errHandOverTarget, apis.AnnotationHandOverTo, tc.to), err, test.EquateErrors()); diff != "" {
				t.Errorf("%s: Observe() error -want +got:\n%s", tc.reason, diff)
			}
			if fake.reads+len(fake.calls) != 0 {
				t.Errorf("%s: %d reads, changes %v; want none", tc.reason, fake.reads, fake.calls)
			}
		})
	}
}

// TestStaleListingNeverDeletesAHandedOverApp: an Observe that read a listing
// from before the hand-over took the app for the old owner's; the Update after
// it finds the new owner in IAS, and the old owner's deletion then leaves the
// app alone.
func TestStaleListingNeverDeletesAHandedOverApp(t *testing.T) {
	cr := newCR(withExternalName(appID), observedAs(appID), handingOverTo("tenant-b/rt"))
	fake := &fakeIAS{apps: []ias.Application{ownedBy("tenant-b/rt")}}
	e, _ := world{cr: cr, ias: fake}.external(t)
	if _, err := e.Update(context.Background(), cr); !errors.As(err, new(*OwnerConflictError)) {
		t.Fatalf("Update() = %v, want a conflict naming the new owner", err)
	}
	if cr.Status.AtProvider.ID != "" {
		t.Errorf("status id %q after finding the new owner, want none", cr.Status.AtProvider.ID)
	}
	inDeletion(cr)
	if obs, err := e.Observe(context.Background(), cr); err != nil || obs.ResourceExists {
		t.Errorf("Observe() of the old owner's deletion = %+v, %v; want gone for it", obs, err)
	}
	if len(fake.calls) != 0 {
		t.Errorf("IAS changes %v, want none", fake.calls)
	}
}
