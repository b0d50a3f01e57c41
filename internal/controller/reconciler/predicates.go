package reconciler

import (
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// creationAnnotations are the annotations crossplane-runtime's managed
// reconciler writes about a creation, in the middle of a reconcile that
// requeues itself right after.
var creationAnnotations = []string{
	meta.AnnotationKeyExternalCreatePending,
	meta.AnnotationKeyExternalCreateSucceeded,
	meta.AnnotationKeyExternalCreateFailed,
}

// DesiredStateChanged is crossplane-runtime's resource.DesiredStateChanged
// that also lets the reconciler's own record of a creation pass without a
// reconcile: the write of external-create-succeeded (with the external name
// the Create set, in the same write). crossplane-runtime lets it through
// because it carries the external name; but the reconcile that wrote it
// requeues itself, so the wake only observes twice what was just created.
// An external name changed by anyone without that record still wakes.
func DesiredStateChanged() predicate.Predicate {
	return predicate.Or(
		predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectOld == nil || e.ObjectNew == nil {
				return false
			}
			return annotationsChanged(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
		}},
		predicate.LabelChangedPredicate{},
		predicate.GenerationChangedPredicate{},
	)
}

// annotationsChanged tells whether anything but the record of a creation
// changed between two sets of annotations. The external name counts as part
// of that record when external-create-succeeded changed with it.
func annotationsChanged(was, is map[string]string) bool {
	ignored := creationAnnotations
	if was[meta.AnnotationKeyExternalCreateSucceeded] != is[meta.AnnotationKeyExternalCreateSucceeded] {
		ignored = append(ignored[:len(ignored):len(ignored)], meta.AnnotationKeyExternalName)
	}
	for k, v := range is {
		if w, ok := was[k]; !slices.Contains(ignored, k) && (!ok || w != v) {
			return true
		}
	}
	for k := range was {
		if _, ok := is[k]; !slices.Contains(ignored, k) && !ok {
			return true
		}
	}
	return false
}
