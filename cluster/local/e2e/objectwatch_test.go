//go:build e2e

package e2e

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// objectWatch knows which objects of one resource exist in a namespace, from
// one watch of their metadata: a bench waiting for thousands of deletions
// learns of each without asking the API server it measures again and again.
type objectWatch struct {
	store cache.Store
	ns    string
}

func watchObjects(ctx context.Context, kubeconfig string, gvr schema.GroupVersionResource, ns string) (*objectWatch, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	inf := metadatainformer.NewFilteredMetadataInformer(mc, gvr, ns, 0, cache.Indexers{}, nil).Informer()
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("the watch on %s did not sync", gvr.Resource)
	}
	return &objectWatch{store: inf.GetStore(), ns: ns}, nil
}

// deleting tells whether the object named name is gone or being deleted, as
// the watch saw it.
func (w *objectWatch) deleting(name string) bool {
	o, ok, _ := w.store.GetByKey(w.ns + "/" + name)
	if !ok {
		return true
	}
	m, err := meta.Accessor(o)
	return err == nil && m.GetDeletionTimestamp() != nil
}

// exists tells whether the object named name exists, as the watch saw it.
func (w *objectWatch) exists(name string) bool {
	_, ok, _ := w.store.GetByKey(w.ns + "/" + name)
	return ok
}
