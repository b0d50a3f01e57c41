package kube

import (
	"context"
	"strings"
	"testing"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// countingReads counts the reads that reach the API server.
type countingReads struct {
	client.Reader
	reads int
}

func (c *countingReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.reads++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// cachedAs answers as the informer cache would, with the transform applied.
type cachedAs struct {
	client.Client
	transform func(any) (any, error)
}

func (c cachedAs) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	_, err := c.transform(obj)
	return err
}

func byConvention(s *corev1.Secret) bool { return strings.HasPrefix(s.Name, "kubeconfig-") }

// TestUsedSecrets: a Secret the provider uses by convention is served from
// the cache; another is read from the API server once and kept while the
// cache shows its version, read again when it changed, not found once gone.
func TestUsedSecrets(t *testing.T) {
	s := fakes.Scheme()
	creds := types.NamespacedName{Namespace: "kcp-system", Name: "ias-creds"}
	kubeconfig := types.NamespacedName{Namespace: "kcp-system", Name: "kubeconfig-rt"}
	teams := types.NamespacedName{Namespace: "team-a", Name: "kubeconfig-rt"}
	api := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: teams.Namespace, Name: teams.Name}, Data: map[string][]byte{"config": []byte("t")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: creds.Namespace, Name: creds.Name}, Data: map[string][]byte{"password": []byte("v1")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kubeconfig.Namespace, Name: kubeconfig.Name}, Data: map[string][]byte{"config": []byte("k")}},
	).Build()
	direct := &countingReads{Reader: api}
	u := UsedSecrets(cachedAs{Client: api, transform: StripUnusedSecrets(byConvention)}, direct, "kcp-system").(*usedSecrets)
	get := func(key types.NamespacedName, k string) (string, error) {
		got := &corev1.Secret{}
		err := u.Get(context.Background(), key, got)
		return string(got.Data[k]), err
	}
	steps := []struct {
		name      string
		key       types.NamespacedName
		dataKey   string
		change    func()
		want      string
		wantReads int
		notFound  bool
	}{
		{name: "a kubeconfig, from the cache", key: kubeconfig, dataKey: "config", want: "k"},
		{name: "another namespace's, not cached: from the API server", key: teams, dataKey: "config", want: "t", wantReads: 1},
		{name: "another namespace's, each time", key: teams, dataKey: "config", want: "t", wantReads: 2},
		{name: "credentials, first read", key: creds, dataKey: "password", want: "v1", wantReads: 3},
		{name: "credentials, unchanged", key: creds, dataKey: "password", want: "v1", wantReads: 3},
		{name: "credentials changed", key: creds, dataKey: "password", change: func() {
			sec := &corev1.Secret{}
			_ = api.Get(context.Background(), creds, sec)
			sec.Data["password"] = []byte("v2")
			_ = api.Update(context.Background(), sec)
		}, want: "v2", wantReads: 4},
		{name: "credentials, read again", key: creds, dataKey: "password", want: "v2", wantReads: 4},
		{name: "credentials deleted", key: creds, dataKey: "password", change: func() {
			_ = api.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: creds.Namespace, Name: creds.Name}})
		}, notFound: true, wantReads: 4},
	}
	for _, st := range steps {
		if st.change != nil {
			st.change()
		}
		got, err := get(st.key, st.dataKey)
		switch {
		case st.notFound && !kerrors.IsNotFound(err):
			t.Errorf("%s: %v, want not found", st.name, err)
		case !st.notFound && (err != nil || got != st.want):
			t.Errorf("%s: %q, %v; want %q", st.name, got, err, st.want)
		}
		if direct.reads != st.wantReads {
			t.Errorf("%s: %d reads of the API server, want %d", st.name, direct.reads, st.wantReads)
		}
	}
	if n := len(u.kept); n != 0 {
		t.Errorf("%d Secrets kept after the only one read directly was deleted, want 0", n)
	}
}

// TestStripUnusedSecrets: a Secret not used keeps no data, labels or
// annotations (kubectl's last-applied-configuration holds its data); a used
// one keeps its data and loses that annotation too.
func TestStripUnusedSecrets(t *testing.T) {
	lastApplied := map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"c2VjcmV0"}}`}
	cases := map[string]struct {
		reason   string
		name     string
		wantData bool
	}{
		"another component's": {reason: "a Secret the provider never reads keeps no data in the cache, nor kubectl's copy of it in an annotation", name: "unrelated"},
		"used":                {reason: "one it reads keeps its data, but not that annotation", name: "kubeconfig-rt", wantData: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: "ns", ResourceVersion: "7", Annotations: lastApplied,
				Labels: map[string]string{"a": "b"}}, Data: map[string][]byte{"k": []byte("v")}}
			out, _ := StripUnusedSecrets(byConvention)(s)
			got := out.(*corev1.Secret)
			if got.Annotations["kubectl.kubernetes.io/last-applied-configuration"] != "" || got.ResourceVersion != "7" {
				t.Errorf("%s\nkept %+v", tc.reason, got.ObjectMeta)
			}
			if hasData := got.Data != nil; hasData != tc.wantData {
				t.Errorf("%s\ndata kept: %v, want %v", tc.reason, hasData, tc.wantData)
			}
			if omitted := got.Annotations[apis.AnnotationDataOmitted] != ""; omitted == tc.wantData {
				t.Errorf("%s\nmarked as omitted: %v", tc.reason, omitted)
			}
		})
	}
}
