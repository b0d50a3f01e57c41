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
		was, is client.Object
		want    bool
	}{
		"creation pending recorded": {
			was: obj(1, nil, nil), is: obj(1, nil, map[string]string{pending: "t1"}),
		},
		"creation succeeded recorded with the external name the Create set": {
			was: obj(1, nil, map[string]string{pending: "t1", name: "rs"}),
			is:  obj(1, nil, map[string]string{pending: "t1", succeeded: "t2", name: "uuid"}),
		},
		"external name changed by someone else": {
			was: obj(1, nil, map[string]string{succeeded: "t2", name: "uuid"}),
			is:  obj(1, nil, map[string]string{succeeded: "t2", name: "other"}), want: true,
		},
		"another annotation added with the record": {
			was: obj(1, nil, nil), is: obj(1, nil, map[string]string{succeeded: "t2", "team": "a"}), want: true,
		},
		"annotation removed": {
			was: obj(1, nil, map[string]string{"team": "a"}), is: obj(1, nil, nil), want: true,
		},
		"spec changed":  {was: obj(1, nil, nil), is: obj(2, nil, nil), want: true},
		"label changed": {was: obj(1, nil, nil), is: obj(1, map[string]string{"a": "b"}, nil), want: true},
		"status only":   {was: obj(1, nil, nil), is: obj(1, nil, nil)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := DesiredStateChanged().Update(event.UpdateEvent{ObjectOld: tc.was, ObjectNew: tc.is}); got != tc.want {
				t.Errorf("DesiredStateChanged().Update() = %v, want %v", got, tc.want)
			}
		})
	}
}
