package iasapplication

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apisv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/tenantconfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// TestTenantListerListsEveryConfiguredTenant: at start the tenant of each
// config is listed; a config that does not resolve is skipped, not fatal. The
// platform's configs are read from the API server: their listing begins while
// the cache (the reader, here held) has not answered yet.
func TestTenantListerListsEveryConfiguredTenant(t *testing.T) {
	sim, err := iassim.New(iassim.Options{RateLimit: -1, Latency: 50 * time.Millisecond}).Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	for range 150 {
		sim.AddApp(iassim.App{Name: uuid.NewString()})
	}
	scheme := fakes.Scheme()
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: "ias"},
			Data: map[string][]byte{tenantconfig.KeyURL: []byte(sim.URL), tenantconfig.KeyUsername: []byte("admin"), tenantconfig.KeyPassword: []byte("admin-password")}},
		&apisv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec: apisv1alpha1.ClusterProviderConfigSpec{Credentials: apisv1alpha1.ClusterCredentials{
				SecretRef: xpv2.SecretReference{Namespace: "crossplane-system", Name: "ias"}}}},
		// Its credentials Secret does not exist.
		&apisv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "broken"},
			Spec: apisv1alpha1.ProviderConfigSpec{Credentials: apisv1alpha1.LocalCredentials{
				SecretRef: xpv2.LocalSecretReference{Name: "missing"}}}},
	).Build()
	pool := inventory.New(ias.NewPool(ias.PoolOptions{}), nil, nil)

	cacheFilled := make(chan struct{})
	cache := heldReader{Reader: kube, until: cacheFilled}
	started := make(chan error)
	go func() {
		started <- tenantLister{reader: cache, direct: kube, providerConfigs: tenantconfig.Resolver{Certs: ias.NewClientCerts(8), PlainHTTPLoopback: true},
			listings: pool, log: logging.NewNopLogger()}.Start(context.Background())
	}()
	released := make(chan struct{})
	for deadline := time.Now().Add(5 * time.Second); !pool.WhenListed(uuid.NewString(), func() { close(released) }); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no first listing of the platform's tenant runs while the cache has not answered")
		}
	}
	close(cacheFilled)
	if err := <-started; err != nil {
		t.Fatalf("Start: %v", err)
	}
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("the first listing did not end")
	}
	if got := sim.Stats().Count(operation.ListApplications, 200); got != 2 {
		t.Errorf("IAS answered %d listing pages, want the 2 pages of the one tenant that resolves", got)
	}
}

// heldReader answers once until is closed, as a cache that has not filled yet.
type heldReader struct {
	client.Reader
	until chan struct{}
}

func (r heldReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	<-r.until
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r heldReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	<-r.until
	return r.Reader.List(ctx, list, opts...)
}
