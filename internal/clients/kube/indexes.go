package kube

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// IndexScope is where the lookups of a field index look: within one
// namespace, or across all.
type IndexScope bool

const (
	// InNamespace serves lookups with client.InNamespace only.
	InNamespace IndexScope = false
	// AcrossNamespaces serves lookups without a namespace only.
	AcrossNamespaces IndexScope = true
)

// The informer cache's names of field indexes and of their keys, as
// controller-runtime's FieldIndexer writes and its cache reader looks them
// up (pkg/cache/internal: FieldIndexName, KeyToNamespacedKey).
const (
	fieldIndexPrefix = "field:"
	allNamespaces    = "__all_namespaces"
)

// IndexField indexes obj's kind in the informer cache by field, as
// mgr.GetFieldIndexer().IndexField does, and is listed the same way, with
// client.MatchingFields. controller-runtime keys every namespaced object
// twice, once for lookups within its namespace and once for lookups across
// all, and keeps a set of object keys per key: with one value or two per
// object, unique to it, those sets are the largest part of a RuntimeSecret's
// memory after the object itself. Here each object is keyed in the scope its
// lookups use, once; a lookup in the other scope finds nothing.
func IndexField(ctx context.Context, informers cache.Informers, obj client.Object, field string, scope IndexScope, extract client.IndexerFunc) error {
	inf, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	return inf.AddIndexers(toolscache.Indexers{fieldIndexPrefix + field: func(raw any) ([]string, error) {
		o, ok := raw.(client.Object)
		if !ok {
			return nil, fmt.Errorf("index %s: %T is not an object", field, raw)
		}
		ns := o.GetNamespace()
		if scope == AcrossNamespaces || ns == "" {
			ns = allNamespaces
		}
		vals := extract(o)
		keys := make([]string, len(vals))
		for i, v := range vals {
			keys[i] = ns + "/" + v
		}
		return keys, nil
	}})
}
