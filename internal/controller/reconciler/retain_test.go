package reconciler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
)

// TestRetainWhileRuntimeLives: only a gone runtime, or a hand-made resource
// deleted on purpose, reaches the kind's own deletion; every other deletion
// keeps what the resource manages, says so on the resource and its Kyma CR,
// and a read that fails keeps nothing and deletes nothing.
func TestRetainWhileRuntimeLives(t *testing.T) {
	const crd = "runtimesecrets." + v1alpha1.Group
	now := metav1.NewTime(time.Now())
	errBoom := errors.New("boom")
	type objects struct {
		kyma    *metav1.ObjectMeta // nil: no Kyma CR
		kymaErr error
		// staleKyma: the cache still shows a Kyma CR the API server no
		// longer has.
		staleKyma bool
		crdGone   bool // the CRD is being deleted
		crdErr    error
	}
	cases := map[string]struct {
		reason     string
		deleted    bool
		composed   bool
		in         objects
		releaseErr error
		// want
		connected bool // the kind's own connector was called
		released  bool
		events    []string
		wantErr   error
	}{
		"NotDeleted": {
			reason:    "a resource not being deleted is the kind's own business",
			composed:  true,
			in:        objects{kyma: &metav1.ObjectMeta{}},
			connected: true,
		},
		"HandMadeDeletedOnPurpose": {
			reason:    "a hand-made resource deleted on purpose deletes what it manages, Kyma CR or not",
			deleted:   true,
			in:        objects{kyma: &metav1.ObjectMeta{}},
			connected: true,
		},
		"ComposedKymaLives": {
			reason:   "a composed resource whose Kyma CR lives (the EventingAuth, XRD or Configuration went) keeps what it manages",
			deleted:  true,
			composed: true,
			in:       objects{kyma: &metav1.ObjectMeta{}},
			released: true,
			events:   []string{string(ReasonKeptForRuntime) + "/resource", string(ReasonKeptForRuntime) + "/kyma"},
		},
		"ComposedKymaBeingDeleted": {
			reason:    "a runtime whose Kyma CR is being deleted is going: its credentials go",
			deleted:   true,
			composed:  true,
			in:        objects{kyma: &metav1.ObjectMeta{DeletionTimestamp: &now, Finalizers: []string{"x"}}},
			connected: true,
		},
		"ComposedKymaGone": {
			reason:    "a runtime whose Kyma CR is gone is gone",
			deleted:   true,
			composed:  true,
			connected: true,
		},
		"CacheShowsADeletedKyma": {
			reason:    "a Kyma CR only the cache still shows is gone: the API server decides, and the credentials go",
			deleted:   true,
			composed:  true,
			in:        objects{staleKyma: true},
			connected: true,
		},
		"ProviderUninstalled": {
			reason:   "a hand-made resource deleted because its CRD is keeps what it manages",
			deleted:  true,
			in:       objects{crdGone: true},
			released: true,
			events:   []string{string(ReasonKeptForRuntime) + "/resource"},
		},
		"ComposedWhileProviderUninstalled": {
			reason:   "a composed one keeps what it manages for its living Kyma CR",
			deleted:  true,
			composed: true,
			in:       objects{kyma: &metav1.ObjectMeta{}, crdGone: true},
			released: true,
			events:   []string{string(ReasonKeptForRuntime) + "/resource", string(ReasonKeptForRuntime) + "/kyma"},
		},
		"GoneRuntimeWhileProviderUninstalled": {
			reason:    "a composed one of a gone runtime deletes, whatever happens to the CRD",
			deleted:   true,
			composed:  true,
			in:        objects{crdGone: true},
			connected: true,
		},
		"KymaUnreadable": {
			reason:   "not knowing whether the runtime lives deletes nothing and keeps nothing: the deletion is retried",
			deleted:  true,
			composed: true,
			in:       objects{kymaErr: errBoom},
			wantErr:  errors.New(""),
		},
		"CRDUnreadable": {
			reason:  "not knowing whether the provider is being removed deletes nothing",
			deleted: true,
			in:      objects{crdErr: errBoom},
			wantErr: errors.New(""),
		},
		"ReleaseFails": {
			reason:     "what cannot be readied to stay is not left to the garbage collector: the deletion is retried",
			deleted:    true,
			composed:   true,
			in:         objects{kyma: &metav1.ObjectMeta{}},
			releaseErr: errBoom,
			wantErr:    errors.New(""),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "rt-1"}}
			cr.Spec.ForProvider.RuntimeID = "rt-1"
			if tc.deleted {
				cr.SetDeletionTimestamp(&now)
			}
			if tc.composed {
				cr.SetLabels(map[string]string{xcrd.LabelKeyNamePrefixForComposed: "rt-1"})
			}
			get := func(live bool) test.MockGetFn {
				return func(_ context.Context, key client.ObjectKey, obj client.Object) error {
					m := obj.(*metav1.PartialObjectMetadata)
					if key.Name == crd {
						if tc.in.crdGone {
							m.SetDeletionTimestamp(&now)
						}
						return tc.in.crdErr
					}
					if tc.in.kymaErr != nil {
						return tc.in.kymaErr
					}
					kyma := tc.in.kyma
					if tc.in.staleKyma && !live {
						kyma = &metav1.ObjectMeta{}
					}
					if key.Namespace != cr.Namespace || key.Name != "rt-1" || kyma == nil {
						return kerrors.NewNotFound(schema.GroupResource{Resource: "kymas"}, key.Name)
					}
					kyma.DeepCopyInto(&m.ObjectMeta)
					m.SetNamespace(key.Namespace)
					m.SetName(key.Name)
					return nil
				}
			}
			events := &kindEvents{}
			connected, released := false, false
			inner := managed.TypedExternalConnectorFn[*v1alpha1.RuntimeSecret](func(context.Context, *v1alpha1.RuntimeSecret) (managed.TypedExternalClient[*v1alpha1.RuntimeSecret], error) {
				connected = true
				return nil, nil
			})
			retention := Retention{Cached: &test.MockClient{MockGet: get(false)}, Live: &test.MockClient{MockGet: get(true)}, Recorder: events}
			c := RetainWhileRuntimeLives(inner, retention, Keep[*v1alpha1.RuntimeSecret]{
				Kind: v1alpha1.RuntimeSecretKind, CRD: crd,
				RuntimeID: func(cr *v1alpha1.RuntimeSecret) string { return cr.Spec.ForProvider.RuntimeID },
				Release: func(context.Context, *v1alpha1.RuntimeSecret) (string, error) {
					released = true
					return "the Secret", tc.releaseErr
				},
			})
			ext, err := c.Connect(context.Background(), cr)
			if (err != nil) != (tc.wantErr != nil) {
				t.Fatalf("%s\nConnect(...): error %v, want error: %t", tc.reason, err, tc.wantErr != nil)
			}
			if connected != tc.connected {
				t.Errorf("%s\nthe kind's connector called: %t, want %t", tc.reason, connected, tc.connected)
			}
			if released != (tc.released || tc.releaseErr != nil) {
				t.Errorf("%s\nreleased: %t, want %t", tc.reason, released, tc.released)
			}
			if diff := cmp.Diff(tc.events, events.told, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nevents (-want +got):\n%s", tc.reason, diff)
			}
			if tc.released && err == nil {
				obs, err := ext.Observe(context.Background(), cr)
				if err != nil || obs.ResourceExists {
					t.Errorf("%s\nObserve of a kept resource: %+v, %v; want nothing to delete", tc.reason, obs, err)
				}
				if _, err := ext.Delete(context.Background(), cr); err != nil {
					t.Errorf("%s\nDelete of a kept resource: %v", tc.reason, err)
				}
			}
		})
	}
}

// kindEvents keeps each event's reason with what it was told on: the
// resource or its Kyma CR.
type kindEvents struct{ told []string }

func (r *kindEvents) Event(obj runtime.Object, e event.Event) {
	on := "/resource"
	if obj.GetObjectKind().GroupVersionKind() == eventingauth.KymaKind {
		on = "/kyma"
	}
	r.told = append(r.told, string(e.Reason)+on)
}

func (r *kindEvents) WithAnnotations(...string) event.Recorder { return r }

// TestRetentionDecidesADeletionOnce: a deletion found to delete what the
// resource manages stays so for the deletion's later reconciles, which read
// neither the Kyma CR nor the CRD again; a deletion that keeps is read each
// time.
func TestRetentionDecidesADeletionOnce(t *testing.T) {
	const crd = "runtimesecrets." + v1alpha1.Group
	now := metav1.NewTime(time.Now())
	cases := map[string]struct {
		reason    string
		crdGone   bool
		wantReads int
	}{
		"Deletes": {reason: "the second reconcile of a deletion on purpose reads nothing", wantReads: 1},
		"Keeps":   {reason: "a deletion that keeps is not remembered", crdGone: true, wantReads: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reads := 0
			live := &test.MockClient{MockGet: func(_ context.Context, _ client.ObjectKey, obj client.Object) error {
				reads++
				if tc.crdGone {
					obj.SetDeletionTimestamp(&now)
				}
				return nil
			}}
			inner := managed.TypedExternalConnectorFn[*v1alpha1.RuntimeSecret](func(context.Context, *v1alpha1.RuntimeSecret) (managed.TypedExternalClient[*v1alpha1.RuntimeSecret], error) {
				return nil, nil
			})
			c := RetainWhileRuntimeLives(inner, Retention{Cached: live, Live: live, Recorder: &kindEvents{}, Deleting: NewDeletions()},
				Keep[*v1alpha1.RuntimeSecret]{Kind: v1alpha1.RuntimeSecretKind, CRD: crd,
					RuntimeID: func(cr *v1alpha1.RuntimeSecret) string { return cr.Spec.ForProvider.RuntimeID }})
			cr := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "rt-1", UID: "uid-1", DeletionTimestamp: &now}}
			for range 2 {
				if _, err := c.Connect(context.Background(), cr); err != nil {
					t.Fatalf("%s\nConnect(...): %v", tc.reason, err)
				}
			}
			if reads != tc.wantReads {
				t.Errorf("%s\nreads of the API server over two reconciles: %d, want %d", tc.reason, reads, tc.wantReads)
			}
		})
	}
}
