package kube

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// countingReads counts the reads that reach the API server.
type countingReads struct {
	client.Client
	reads int
}

func (c *countingReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.reads++
	return c.Client.Get(ctx, key, obj, opts...)
}

// metadataOf answers the cache's metadata of the Secrets in api.
type metadataOf struct{ api client.Client }

func (m metadataOf) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s := &corev1.Secret{}
	if err := m.api.Get(ctx, key, s); err != nil {
		return err
	}
	obj.(*metav1.PartialObjectMetadata).ObjectMeta = s.ObjectMeta
	return nil
}

func (m metadataOf) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

// TestUsedSecrets: a Secret is read from the API server once and kept while
// the cache shows its version; a change is read again, a deletion is not
// found; only Secrets read are kept.
func TestUsedSecrets(t *testing.T) {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	key := types.NamespacedName{Namespace: "kcp-system", Name: "kubeconfig-rt"}
	api := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: map[string][]byte{"config": []byte("v1")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "unrelated"}, Data: map[string][]byte{"x": []byte("y")}},
	).Build()
	reads := &countingReads{Client: api}
	u := UsedSecrets(reads, metadataOf{api: api}).(*usedSecrets)
	get := func() (string, error) {
		got := &corev1.Secret{}
		err := u.Get(context.Background(), key, got)
		return string(got.Data["config"]), err
	}
	steps := []struct {
		name      string
		change    func()
		want      string
		wantReads int
		notFound  bool
	}{
		{name: "first read", want: "v1", wantReads: 1},
		{name: "read again, unchanged", want: "v1", wantReads: 1},
		{name: "changed", change: func() {
			sec := &corev1.Secret{}
			_ = api.Get(context.Background(), key, sec)
			sec.Data["config"] = []byte("v2")
			_ = api.Update(context.Background(), sec)
		}, want: "v2", wantReads: 2},
		{name: "read again after the change", want: "v2", wantReads: 2},
		{name: "deleted", change: func() {
			_ = api.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
		}, notFound: true, wantReads: 2},
	}
	for _, st := range steps {
		if st.change != nil {
			st.change()
		}
		got, err := get()
		switch {
		case st.notFound && !kerrors.IsNotFound(err):
			t.Errorf("%s: %v, want not found", st.name, err)
		case !st.notFound && (err != nil || got != st.want):
			t.Errorf("%s: %q, %v; want %q", st.name, got, err, st.want)
		}
		if reads.reads != st.wantReads {
			t.Errorf("%s: %d reads of the API server, want %d", st.name, reads.reads, st.wantReads)
		}
	}
	if n := u.Kept(); n != 0 {
		t.Errorf("%d Secrets kept after the only one read was deleted, want 0", n)
	}
}

// TestStripSecretMetadata: kubectl's last-applied-configuration, which holds
// a Secret's data, and everything else not read, is left out of the cache.
func TestStripSecretMetadata(t *testing.T) {
	m := SecretMetadata()
	m.Name, m.Namespace, m.ResourceVersion = "s", "ns", "7"
	m.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"c2VjcmV0"}}`}
	m.Labels = map[string]string{"a": "b"}
	got, _ := StripSecretMetadata(m)
	out := got.(*metav1.PartialObjectMetadata)
	if out.Annotations != nil || out.Labels != nil || out.Name != "s" || out.ResourceVersion != "7" {
		t.Errorf("stripped: %+v", out.ObjectMeta)
	}
}
