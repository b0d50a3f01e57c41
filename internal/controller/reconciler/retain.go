package reconciler

import (
	"context"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
	"github.com/kyma-project/provider-eventing-auth/internal/recent"
)

// ReasonKeptForRuntime is the event told on a managed resource, and on its
// Kyma CR, when its deletion leaves what it manages in place.
const ReasonKeptForRuntime event.Reason = "KeptForLiveRuntime"

// Error messages of the retention decision.
const (
	errReadKyma = "cannot tell whether runtime %s lives: cannot read its Kyma CR %s/%s; the deletion waits, deleting nothing"
	errReadCRD  = "cannot tell whether the provider is being uninstalled: cannot read CustomResourceDefinition %s; the deletion waits, deleting nothing"
	errRelease  = "cannot keep what the resource manages"
)

// Retention decides whether the deletion of a managed resource deletes what it
// manages. Only a gone runtime loses its credentials: a resource composed for a
// runtime whose Kyma CR exists and is not being deleted is being deleted
// because its EventingAuth, the XRD, the Configuration or a Composition's
// resource went (an uninstall, a GitOps prune, a reinstall), and a hand-made
// resource whose own CRD is being deleted because the provider package is
// being removed. Either deletion leaves the IAS app, its secrets and the runtime's
// Secret as they are; a resource of the same namespace and name made again
// takes them up unchanged. A hand-made resource deleted on purpose, and a
// composed one whose Kyma CR is gone or going, delete as crossplane-runtime
// does.
type Retention struct {
	// Cached reads the manager's cache: a Kyma CR it shows gone or going is
	// gone, so a mass deletion of runtimes costs no extra read.
	Cached client.Reader
	// Live reads the API server: a cache that still shows a deleted Kyma CR
	// would leave an orphaned app behind, so a Kyma CR the cache shows is
	// read again here, and so is the CRD of a hand-made resource.
	Live client.Reader
	// Recorder tells the resource and its Kyma CR what was kept.
	Recorder event.Recorder
	// Deleting, if set, remembers the resources whose deletion was found to
	// delete what they manage. That finding is final (a Kyma CR gone or going
	// does not come back; a CRD deleted after a resource's deletion began did
	// not cause it), so a deletion's later reconciles read nothing again.
	Deleting *recent.Memory[types.UID, struct{}]
}

// deletingFor is how long a deletion's finding is remembered: longer than a
// deletion usually takes; a longer one reads again.
const deletingFor = 10 * time.Minute

// NewDeletions is the memory for Retention.Deleting.
func NewDeletions() *recent.Memory[types.UID, struct{}] {
	return recent.New[types.UID, struct{}](deletingFor, 0)
}

// Keep is what one kind keeps when its deletion is retained.
type Keep[T resource.Managed] struct {
	// Kind names the kind in the events.
	Kind string
	// CRD names the kind's CustomResourceDefinition.
	CRD string
	// RuntimeID is the runtime a resource serves: its Kyma CR's name.
	RuntimeID func(T) string
	// Release readies what the resource manages to outlive it (nil: nothing
	// to do) and says what stays, for the events.
	Release func(ctx context.Context, mg T) (kept string, err error)
}

// kept is why a deletion leaves what the resource manages; the Kyma CR that
// still lives, if that is why.
type kept struct {
	why  string
	kyma *metav1.PartialObjectMetadata
}

// decide returns, for a resource being deleted, why its deletion keeps what it
// manages; nil when it deletes it. A composed resource is kept while its Kyma
// CR lives; a hand-made one while its CRD is being deleted. A read that fails
// keeps nothing and deletes nothing: the deletion is retried.
func (r Retention) decide(ctx context.Context, mg resource.Managed, crd, runtimeID string) (*kept, error) {
	if r.Deleting != nil {
		if _, ok := r.Deleting.Get(mg.GetUID(), time.Now()); ok {
			return nil, nil
		}
	}
	k, err := r.read(ctx, mg, crd, runtimeID)
	if k == nil && err == nil && r.Deleting != nil {
		r.Deleting.Put(mg.GetUID(), struct{}{}, time.Now())
	}
	return k, err
}

// read decides as decide does, from the Kyma CR and the CRD.
func (r Retention) read(ctx context.Context, mg resource.Managed, crd, runtimeID string) (*kept, error) {
	if _, composed := mg.GetLabels()[xcrd.LabelKeyNamePrefixForComposed]; composed && runtimeID != "" {
		kyma, err := r.liveKyma(ctx, mg.GetNamespace(), runtimeID)
		if kyma == nil || err != nil {
			return nil, err
		}
		return &kept{why: fmt.Sprintf("its Kyma CR %s/%s exists and is not being deleted", kyma.GetNamespace(), kyma.GetName()), kyma: kyma}, nil
	}
	def := &metav1.PartialObjectMetadata{}
	def.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := r.Live.Get(ctx, types.NamespacedName{Name: crd}, def); err != nil && !kerrors.IsNotFound(err) {
		return nil, errors.Wrapf(err, errReadCRD, crd)
	}
	if def.GetDeletionTimestamp() != nil {
		return &kept{why: fmt.Sprintf("its CustomResourceDefinition %s is being deleted (the provider package is being removed)", crd)}, nil
	}
	return nil, nil
}

// liveKyma returns the Kyma CR of a runtime that exists and is not being
// deleted, as the API server says; nil when it is gone or going.
func (r Retention) liveKyma(ctx context.Context, ns, runtimeID string) (*metav1.PartialObjectMetadata, error) {
	for i, reader := range []client.Reader{r.Cached, r.Live} {
		kyma := &metav1.PartialObjectMetadata{}
		kyma.SetGroupVersionKind(eventingauth.KymaKind)
		err := reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: runtimeID}, kyma)
		switch {
		case kerrors.IsNotFound(err) || kmeta.IsNoMatchError(err):
			return nil, nil
		case err != nil:
			return nil, errors.Wrapf(err, errReadKyma, runtimeID, ns, runtimeID)
		case kyma.GetDeletionTimestamp() != nil:
			return nil, nil
		case i == 1:
			return kyma, nil
		}
	}
	return nil, nil
}

// RetainWhileRuntimeLives wraps c so that a resource whose deletion Retention
// keeps is never connected: its Observe reports nothing to delete, and
// crossplane-runtime removes its finalizer. A managed reconciler's deletion
// policy is fixed per resource; this one is decided when the deletion comes.
func RetainWhileRuntimeLives[T resource.Managed](c managed.TypedExternalConnector[T], r Retention, k Keep[T]) managed.TypedExternalConnector[T] {
	return &retaining[T]{TypedExternalConnector: c, r: r, k: k}
}

type retaining[T resource.Managed] struct {
	managed.TypedExternalConnector[T]
	r Retention
	k Keep[T]
}

func (c *retaining[T]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	if !meta.WasDeleted(mg) {
		return c.TypedExternalConnector.Connect(ctx, mg)
	}
	k, err := c.r.decide(ctx, mg, c.k.CRD, c.k.RuntimeID(mg))
	if err != nil {
		return nil, err
	}
	if k == nil {
		return c.TypedExternalConnector.Connect(ctx, mg)
	}
	what := "what it manages"
	if c.k.Release != nil {
		if what, err = c.k.Release(ctx, mg); err != nil {
			return nil, errors.Wrap(err, errRelease)
		}
	}
	c.r.Recorder.Event(mg, event.Normal(ReasonKeptForRuntime, fmt.Sprintf("Deleted without deleting %s: %s. A resource of the same namespace and name takes it up again unchanged", what, k.why)))
	if k.kyma != nil {
		c.r.Recorder.Event(k.kyma, event.Normal(ReasonKeptForRuntime, fmt.Sprintf("%s %s/%s was deleted while this Kyma CR exists: %s kept as it is; the runtime keeps its credentials",
			c.k.Kind, mg.GetNamespace(), mg.GetName(), what)))
	}
	return retained[T]{}, nil
}

// retained is the external client of a resource whose deletion keeps what it
// manages: there is nothing for the deletion to delete.
type retained[T resource.Managed] struct{}

func (retained[T]) Observe(context.Context, T) (managed.ExternalObservation, error) {
	return managed.ExternalObservation{ResourceExists: false}, nil
}

func (retained[T]) Create(context.Context, T) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

func (retained[T]) Update(context.Context, T) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}

func (retained[T]) Delete(context.Context, T) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

func (retained[T]) Disconnect(context.Context) error { return nil }
