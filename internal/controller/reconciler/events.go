package reconciler

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"k8s.io/apimachinery/pkg/runtime"
)

// reasonDeletedExternal is the reason of the Normal event crossplane-runtime's
// managed reconciler records when it asked for the external resource's
// deletion.
const reasonDeletedExternal event.Reason = "DeletedExternalResource"

// WithoutDeletedEvents is r without the Normal event of a successful request to
// delete the external resource. The managed resource goes a moment later, so
// nobody reads that event on it, while a mass deletion paid one API write per
// resource for it; a failed deletion still records its Warning, and the
// Deleting condition still shows on the resource while it lasts.
func WithoutDeletedEvents(r event.Recorder) event.Recorder {
	return withoutDeleted{r}
}

type withoutDeleted struct{ event.Recorder }

func (w withoutDeleted) Event(obj runtime.Object, e event.Event) {
	if e.Type == event.TypeNormal && e.Reason == reasonDeletedExternal {
		return
	}
	w.Recorder.Event(obj, e)
}

func (w withoutDeleted) WithAnnotations(keysAndValues ...string) event.Recorder {
	return withoutDeleted{w.Recorder.WithAnnotations(keysAndValues...)}
}
