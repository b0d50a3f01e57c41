// Package kube holds what the provider adds to its own API server client.
package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SkipUnchangedStatus wraps a client so that a status update of a managed
// resource that would change nothing is not sent. crossplane-runtime's managed
// reconciler writes the status after every reconcile; the API server turns an
// unchanged one into a no-op, but each still costs a request of the client's
// rate limit. At thousands of resources those no-op writes, not IAS, bound a
// restart and the steady polls. The status is compared with the cached object
// of the same resourceVersion, so a stale cache always lets the write through.
func SkipUnchangedStatus(c client.Client, cache client.Reader) client.Client {
	return &statusSkipping{Client: c, cache: cache}
}

type statusSkipping struct {
	client.Client
	cache client.Reader
}

func (c *statusSkipping) Status() client.SubResourceWriter {
	return &statusWriter{SubResourceWriter: c.Client.Status(), cache: c.cache}
}

type statusWriter struct {
	client.SubResourceWriter
	cache client.Reader
}

func (w *statusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if len(opts) == 0 && w.unchanged(ctx, obj) {
		return nil
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

// unchanged tells whether obj's status is what the cache holds for its
// resourceVersion. Only managed resources are compared: their informers run
// anyway, so the lookup never starts a new one.
func (w *statusWriter) unchanged(ctx context.Context, obj client.Object) bool {
	if _, ok := obj.(resource.Managed); !ok || obj.GetResourceVersion() == "" {
		return false
	}
	cached, ok := obj.DeepCopyObject().(client.Object)
	if !ok || w.cache.Get(ctx, client.ObjectKeyFromObject(obj), cached) != nil ||
		cached.GetResourceVersion() != obj.GetResourceVersion() {
		return false
	}
	// Compared as the API server stores them: as JSON, times at the precision
	// it keeps. Only the status is encoded; converting whole objects cost more
	// than the rest of a waiting reconcile.
	a, okA := statusJSON(obj)
	b, okB := statusJSON(cached)
	return okA && okB && bytes.Equal(a, b)
}

// statusJSON is the JSON of obj's Status field.
func statusJSON(obj client.Object) ([]byte, bool) {
	f := StatusField(obj)
	if !f.IsValid() {
		return nil, false
	}
	b, err := json.Marshal(f.Interface())
	return b, err == nil
}

// StatusField is the Status field of a typed object (a pointer to a struct);
// the zero Value when it has none.
func StatusField(obj any) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName("Status")
}
