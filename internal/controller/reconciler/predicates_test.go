package reconciler

import (
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

func TestDesiredStateChanged(t *testing.T) {
	const (
		pending   = meta.AnnotationKeyExternalCreatePending
		succeeded = meta.AnnotationKeyExternalCreateSucceeded
		name      = meta.AnnotationKeyExternalName
	)
	obj := func(gen int64, labels, annotations map[string]string) client.Object {
		return &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Generation: gen, Labels: labels, Annotations: annotations}}
	}
	cases := map[string]struct {
		reason  string
		was, is client.Object
		want    bool
	}{
		"CreationPendingRecorded": {
			reason: "the provider's own record of a create to come is no change of the desired state",
			was:    obj(1, nil, nil), is: obj(1, nil, map[string]string{pending: "t1"}),
		},
		"CreationSucceededRecorded": {
			reason: "nor is the record of its success with the external name the Create set",
			was:    obj(1, nil, map[string]string{pending: "t1", name: "rs"}),
			is:     obj(1, nil, map[string]string{pending: "t1", succeeded: "t2", name: "uuid"}),
		},
		"ExternalNameChangedBySomeoneElse": {
			reason: "an external name changed by someone else points the resource at another app",
			was:    obj(1, nil, map[string]string{succeeded: "t2", name: "uuid"}),
			is:     obj(1, nil, map[string]string{succeeded: "t2", name: "other"}), want: true,
		},
		"AnotherAnnotationWithTheRecord": {
			reason: "an annotation added along with the record is someone's change",
			was:    obj(1, nil, nil), is: obj(1, nil, map[string]string{succeeded: "t2", "team": "a"}), want: true,
		},
		"AnnotationRemoved": {
			reason: "so is one removed",
			was:    obj(1, nil, map[string]string{"team": "a"}), is: obj(1, nil, nil), want: true,
		},
		"SpecChanged":  {reason: "a new generation is a change of the spec", was: obj(1, nil, nil), is: obj(2, nil, nil), want: true},
		"LabelChanged": {reason: "labels select the resource", was: obj(1, nil, nil), is: obj(1, map[string]string{"a": "b"}, nil), want: true},
		"StatusOnly":   {reason: "a status write is the reconciler's own", was: obj(1, nil, nil), is: obj(1, nil, nil)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := DesiredStateChanged().Update(event.UpdateEvent{ObjectOld: tc.was, ObjectNew: tc.is}); got != tc.want {
				t.Errorf("%s\nDesiredStateChanged().Update() = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
