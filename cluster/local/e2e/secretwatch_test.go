//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// secretWatch knows which runtimes hold their eventing-webhook-auth Secret
// with a client secret, from one watch on the runtime API server: the bench
// learns when each Secret arrives without polling a thousand of them, which
// took a large share of the machine it measures.
type secretWatch struct {
	mu  sync.Mutex
	has map[string]bool // by runtime namespace
}

func watchRuntimeSecrets(ctx context.Context, kubeconfig string) (*secretWatch, error) {
	cs, err := clientsetFor(kubeconfig)
	if err != nil {
		return nil, err
	}
	w := &secretWatch{has: map[string]bool{}}
	lw := cache.NewFilteredListWatchFromClient(cs.CoreV1().RESTClient(), "secrets", metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=eventing-webhook-auth" })
	inf := cache.NewSharedIndexInformer(lw, &corev1.Secret{}, 0, cache.Indexers{})
	set := func(obj any) {
		if s, ok := obj.(*corev1.Secret); ok {
			w.mu.Lock()
			w.has[s.Namespace] = len(s.Data["client_secret"]) > 0
			w.mu.Unlock()
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if s, ok := obj.(*corev1.Secret); ok {
				w.mu.Lock()
				delete(w.has, s.Namespace)
				w.mu.Unlock()
			}
		},
	}); err != nil {
		return nil, err
	}
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("the watch on runtime Secrets did not sync")
	}
	return w, nil
}

// holds tells whether runtime id holds its Secret.
func (w *secretWatch) holds(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.has[id]
}
