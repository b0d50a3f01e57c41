package kube

import (
	"context"
	"errors"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errNoStore: the cache's informer of a kind keeps no store to read.
var errNoStore = errors.New("the cache's informer keeps no store to read")

// CachedObjects reads every object of a kind the informer cache holds.
type CachedObjects func(context.Context) ([]client.Object, error)

// ReadCached returns what reads the informer cache's objects of obj's kind
// themselves, neither copied nor waited for: read only, for what counts or
// summarises them (metrics). A List from the cache, even with
// client.UnsafeDisableDeepCopy, copies each object's struct into the list's
// items: at thousands of resources every reading would allocate megabytes
// that the garbage collector then scans.
func ReadCached(informers cache.Informers, obj client.Object) CachedObjects {
	return func(ctx context.Context) ([]client.Object, error) {
		inf, err := informers.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return nil, err
		}
		s, ok := inf.(interface{ GetStore() toolscache.Store })
		if !ok {
			return nil, errNoStore
		}
		all := s.GetStore().List()
		out := make([]client.Object, 0, len(all))
		for _, o := range all {
			if co, ok := o.(client.Object); ok {
				out = append(out, co)
			}
		}
		return out, nil
	}
}
