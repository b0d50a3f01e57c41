package kube

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
)

// StripUnusedSecrets is the informer cache's transform of Secrets: of a
// Secret the provider does not use (use tells), it keeps name, namespace and
// resource version alone, so that the Secrets of other components of a
// shared management cluster cost it a few hundred bytes each and their data
// never stays in it. Annotations go from every Secret: kubectl's
// last-applied-configuration holds a Secret's data in plain text.
func StripUnusedSecrets(use func(*corev1.Secret) bool) cache.TransformFunc {
	return func(obj any) (any, error) {
		s, ok := obj.(*corev1.Secret)
		if !ok {
			return obj, nil
		}
		s.ManagedFields, s.Annotations = nil, nil
		if !use(s) {
			*s = corev1.Secret{TypeMeta: s.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace,
				ResourceVersion: s.ResourceVersion, Annotations: map[string]string{apis.AnnotationDataOmitted: "true"}}}
		}
		return s, nil
	}
}

// usedSecretsSweep is how often the data of Secrets that changed or went is
// dropped.
const usedSecretsSweep = 10 * time.Minute

// UsedSecrets serves reads of Secrets from c, the cached client; a Secret
// the cache holds without its data (StripUnusedSecrets: one the provider uses
// although no convention told, such as a ProviderConfig's credentials) is
// read from the API server with direct once and kept until the cache shows
// another resource version.
//
// Only the Secrets of cachedNamespace are watched and cached: a Secret of any
// other namespace (a team's ProviderConfig credentials, its connection
// Secrets) is read from the API server at each use, so that what other
// namespaces keep in Secrets never reaches the process unless the provider
// reads it.
func UsedSecrets(c client.Client, direct client.Reader, cachedNamespace string) client.Client {
	return &usedSecrets{Client: c, direct: direct, cachedNamespace: cachedNamespace, kept: map[types.NamespacedName]*corev1.Secret{}}
}

type usedSecrets struct {
	client.Client
	direct          client.Reader
	cachedNamespace string

	mu    sync.Mutex
	kept  map[types.NamespacedName]*corev1.Secret
	swept time.Time
}

func (u *usedSecrets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return u.Client.Get(ctx, key, obj, opts...)
	}
	if key.Namespace != u.cachedNamespace {
		return u.direct.Get(ctx, key, s, opts...)
	}
	if err := u.Client.Get(ctx, key, s, opts...); err != nil {
		if kerrors.IsNotFound(err) {
			u.forget(key)
		}
		return err
	}
	if s.Annotations[apis.AnnotationDataOmitted] == "" {
		return nil
	}
	rv := s.ResourceVersion
	u.mu.Lock()
	kept := u.kept[key]
	u.mu.Unlock()
	if kept != nil && kept.ResourceVersion == rv {
		kept.DeepCopyInto(s)
		return nil
	}
	if err := u.direct.Get(ctx, key, s); err != nil {
		if kerrors.IsNotFound(err) {
			u.forget(key)
		}
		return err
	}
	keep := s.DeepCopy()
	keep.ManagedFields = nil
	u.mu.Lock()
	u.kept[key] = keep
	u.mu.Unlock()
	u.sweep(ctx)
	return nil
}

func (u *usedSecrets) forget(key types.NamespacedName) {
	u.mu.Lock()
	delete(u.kept, key)
	u.mu.Unlock()
}

// sweep drops, at most every usedSecretsSweep, the data of Secrets the cache
// no longer holds in the version kept: those deleted or changed and not read
// since.
func (u *usedSecrets) sweep(ctx context.Context) {
	u.mu.Lock()
	if time.Since(u.swept) < usedSecretsSweep {
		u.mu.Unlock()
		return
	}
	u.swept = time.Now()
	keys := make(map[types.NamespacedName]string, len(u.kept))
	for k, s := range u.kept {
		keys[k] = s.ResourceVersion
	}
	u.mu.Unlock()
	for k, rv := range keys {
		s := &corev1.Secret{}
		if err := u.Client.Get(ctx, k, s); (err != nil && kerrors.IsNotFound(err)) || (err == nil && s.ResourceVersion != rv) {
			u.forget(k)
		}
	}
}
