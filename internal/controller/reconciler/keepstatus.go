package reconciler

import (
	"context"
	"reflect"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The managed reconciler adds its finalizer and records a creation with
// Updates in the middle of a reconcile, after Observe (and Create) set the
// status in memory and before it writes that status. An Update decodes the API
// server's answer into the object, status and all, so the status written at
// the end was the one from before Observe: a RuntimeSecret's first status
// write showed no Ready condition at all and needed a second write, and an
// IASApplication's Creating status missed the ID and secret its Create found.
// These wrappers keep the status the reconcile set.

// KeepStatusFinalizer is f, which adds and removes the finalizer name,
// keeping the object's status across its writes.
func KeepStatusFinalizer(f resource.Finalizer, name string) resource.Finalizer {
	return keepStatusFinalizer{Finalizer: f, name: name}
}

type keepStatusFinalizer struct {
	resource.Finalizer
	name string
}

func (f keepStatusFinalizer) AddFinalizer(ctx context.Context, obj resource.Object) error {
	if meta.FinalizerExists(obj, f.name) {
		return nil // nothing to write, nothing to keep
	}
	return keepingStatus(obj, func() error { return f.Finalizer.AddFinalizer(ctx, obj) })
}

func (f keepStatusFinalizer) RemoveFinalizer(ctx context.Context, obj resource.Object) error {
	if !meta.FinalizerExists(obj, f.name) {
		return nil
	}
	return keepingStatus(obj, func() error { return f.Finalizer.RemoveFinalizer(ctx, obj) })
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
	dst, src := statusField(obj), statusField(kept)
	if dst.IsValid() && src.IsValid() && dst.CanSet() {
		dst.Set(src)
	}
	return err
}

func statusField(o any) reflect.Value {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName("Status")
}

// KeepStatus are the managed reconciler options that add its finalizer and
// record a creation as crossplane-runtime does, with c, keeping the status.
func KeepStatus(c client.Client) []managed.ReconcilerOption {
	return []managed.ReconcilerOption{
		managed.WithFinalizer(KeepStatusFinalizer(resource.NewAPIFinalizer(c, managed.FinalizerName), managed.FinalizerName)),
		managed.WithCriticalAnnotationUpdater(KeepStatusAnnotations(managed.NewRetryingCriticalAnnotationUpdater(c))),
	}
}
