package kube

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretMetadata is how the informer cache holds Secrets: metadata only, so
// that the Secrets of a shared management cluster that the provider does not
// use cost it a few hundred bytes each and their data never enters it.
func SecretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// StripSecretMetadata leaves of a cached Secret's metadata what the provider
// reads (name, namespace, resource version, owners): an annotation such as
// kubectl's last-applied-configuration holds a Secret's data in plain text.
func StripSecretMetadata(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.Annotations, m.Labels, m.ManagedFields = nil, nil, nil
	}
	return obj, nil
}

// usedSecretsSweep is how often the data of Secrets that changed or went is
// dropped.
const usedSecretsSweep = 10 * time.Minute

// UsedSecrets serves reads of Secrets: a Secret the informer cache (metadata
// only, SecretMetadata) does not hold is not found, as with a cached client;
// one it holds is read from the API server once and kept until the cache
// shows another resource version. Only the Secrets the provider reads (the
// runtimes' kubeconfigs, ProviderConfig credentials, the connection Secrets
// it writes) are kept whole. c must read Secrets from the API server (the
// manager's client with Secrets left out of its cache), meta from the cache.
func UsedSecrets(c client.Client, meta client.Reader) client.Client {
	return &usedSecrets{Client: c, meta: meta, kept: map[types.NamespacedName]*corev1.Secret{}}
}

type usedSecrets struct {
	client.Client
	meta client.Reader

	mu    sync.Mutex
	kept  map[types.NamespacedName]*corev1.Secret
	swept time.Time
}

func (u *usedSecrets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return u.Client.Get(ctx, key, obj, opts...)
	}
	m := SecretMetadata()
	if err := u.meta.Get(ctx, key, m); err != nil {
		if kerrors.IsNotFound(err) {
			u.forget(key)
		}
		return err
	}
	u.mu.Lock()
	kept := u.kept[key]
	u.mu.Unlock()
	if kept != nil && kept.ResourceVersion == m.ResourceVersion {
		kept.DeepCopyInto(s)
		return nil
	}
	if err := u.Client.Get(ctx, key, s, opts...); err != nil {
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
// no longer holds in the version kept: those deleted (a runtime gone) or
// changed and not read since.
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
		m := SecretMetadata()
		if err := u.meta.Get(ctx, k, m); (err != nil && kerrors.IsNotFound(err)) || (err == nil && m.ResourceVersion != rv) {
			u.forget(k)
		}
	}
}

// Kept is how many Secrets' data is kept.
func (u *usedSecrets) Kept() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.kept)
}
