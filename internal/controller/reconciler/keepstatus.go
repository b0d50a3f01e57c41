package reconciler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/kube"
)

// The managed reconciler adds its finalizer and records a creation with
// Updates in the middle of a reconcile, after Observe (and Create) set the
// status in memory and before it writes that status. An Update decodes the API
// server's answer into the object, status and all, so the status written at
// the end would be the one from before Observe: a RuntimeSecret's first status
// write would show no Ready condition at all and need a second write, and an
// IASApplication's Creating status would miss the ID and secret its Create
// found.
// These wrappers keep the status the reconcile set.

// KeepStatusFinalizer adds and removes the finalizer name as
// crossplane-runtime's APIFinalizer does, keeping the object's status across
// its writes. It removes the finalizer with a JSON patch that tests for it
// instead of an Update: the Update carries the resourceVersion the reconcile
// read, and right after a deletion's status write the cache often held the
// one before, so the Update failed on a conflict and the whole reconcile,
// with its call to the runtime, ran again.
func KeepStatusFinalizer(c client.Client, name string) resource.Finalizer {
	return keepStatusFinalizer{Finalizer: resource.NewAPIFinalizer(c, name), client: c, name: name}
}

type keepStatusFinalizer struct {
	resource.Finalizer
	client client.Client
	name   string
}

func (f keepStatusFinalizer) AddFinalizer(ctx context.Context, obj resource.Object) error {
	if meta.FinalizerExists(obj, f.name) {
		return nil // nothing to write, nothing to keep
	}
	return keepingStatus(obj, func() error { return f.Finalizer.AddFinalizer(ctx, obj) })
}

func (f keepStatusFinalizer) RemoveFinalizer(ctx context.Context, obj resource.Object) error {
	i := slices.Index(obj.GetFinalizers(), f.name)
	if i < 0 {
		return nil
	}
	return keepingStatus(obj, func() error {
		name, err := json.Marshal(f.name)
		if err != nil {
			return err
		}
		patch := fmt.Appendf(nil, `[{"op":"test","path":"/metadata/finalizers/%d","value":%s},{"op":"remove","path":"/metadata/finalizers/%d"}]`, i, name, i)
		if err := f.client.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch)); err == nil {
			return nil
		}
		// The finalizers changed meanwhile (the test failed), or the patch
		// could not be made: as crossplane-runtime does.
		return f.Finalizer.RemoveFinalizer(ctx, obj)
	})
}

// KeepStatusAnnotations is u, keeping the object's status across its writes.
func KeepStatusAnnotations(u managed.CriticalAnnotationUpdater) managed.CriticalAnnotationUpdater {
	return managed.CriticalAnnotationUpdateFn(func(ctx context.Context, obj client.Object) error {
		return keepingStatus(obj, func() error { return u.UpdateCriticalAnnotations(ctx, obj) })
	})
}

// keepingStatus runs write and puts obj's Status field back as it was.
func keepingStatus(obj client.Object, write func() error) error {
	kept := obj.DeepCopyObject()
	err := write()
	dst, src := kube.StatusField(obj), kube.StatusField(kept)
	if dst.IsValid() && src.IsValid() && dst.CanSet() {
		dst.Set(src)
	}
	return err
}

// KeepStatus are the managed reconciler options that add its finalizer and
// record a creation as crossplane-runtime does, with c, keeping the status.
func KeepStatus(c client.Client) []managed.ReconcilerOption {
	return []managed.ReconcilerOption{
		managed.WithFinalizer(KeepStatusFinalizer(c, managed.FinalizerName)),
		managed.WithCriticalAnnotationUpdater(KeepStatusAnnotations(managed.NewRetryingCriticalAnnotationUpdater(c))),
	}
}
