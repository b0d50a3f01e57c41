package iasapplication

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	apisv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/tenantconfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// tenantClients answers as TenantClients and Logons, through their function
// adapters, and records the tenant asked for.
type tenantClients struct {
	client   inventory.Client
	err      error
	rejected bool
	got      ias.Tenant
}

func (f *tenantClients) clients() TenantClientsFn {
	return func(t ias.Tenant) (inventory.Client, error) { f.got = t; return f.client, f.err }
}

func (f *tenantClients) logons() LogonsFn {
	return func(ias.Tenant) (time.Time, bool) { return at, f.rejected }
}

func TestConnect(t *testing.T) {
	errBoom := errors.New("boom")
	config := test.NewMockGetFn(nil, func(o client.Object) error {
		switch o := o.(type) {
		case *apisv1alpha1.ClusterProviderConfig:
			o.Spec.Credentials.SecretRef = xpv2.SecretReference{Name: "creds", Namespace: "kcp"}
		case *corev1.Secret:
			o.Data = map[string][]byte{"username": []byte("admin"), "password": []byte("pw"), "url": []byte("https://t.accounts.ondemand.com")}
		}
		return nil
	})
	cases := map[string]struct {
		reason  string
		usage   resource.ModernTracker
		pool    *tenantClients
		get     test.MockGetFn
		err     error
		events  []string
		wantURL string
		// kyma is the Kyma CRs' namespace, the one the ClusterProviderConfig
		// admits; default the resource's.
		kyma string
	}{
		"UsageNotTracked": {
			reason: "a ProviderConfig whose use is not tracked could be deleted under the resource",
			usage:  resource.ModernTrackerFn(func(context.Context, resource.ModernManaged) error { return errBoom }),
			get:    config,
			pool:   &tenantClients{client: &fakeIAS{}},
			err:    errors.Wrap(errBoom, errTrackUsage),
		},
		"ProviderConfigUnreadable": {
			reason: "without its ProviderConfig the resource has no tenant to talk to",
			get:    test.NewMockGetFn(errBoom),
			err:    errors.Wrapf(errBoom, tenantconfig.ErrGet, "ClusterProviderConfig default"),
		},
		"NamespaceNotAdmitted": {
			reason: "a namespace the ClusterProviderConfig does not admit gets nothing of the platform's credentials, and the error says how to admit it; no usage is recorded, which would keep the platform's config from being deleted",
			usage:  resource.ModernTrackerFn(func(context.Context, resource.ModernManaged) error { return errBoom }),
			get:    config,
			pool:   &tenantClients{client: &fakeIAS{}},
			kyma:   "kcp-system",
			err:    errors.Errorf(tenantconfig.ErrNotAdmitted, "default", "kcp", "only the Kyma CRs' namespace kcp-system (set spec.namespaces or spec.namespaceSelector to admit others)"),
		},
		"NoClient": {
			reason:  "a tenant client that cannot be built fails Connect",
			get:     config,
			pool:    &tenantClients{err: errBoom},
			err:     errBoom,
			wantURL: "https://t.accounts.ondemand.com",
		},
		"Connected": {
			reason:  "an admitted resource gets its tenant's client",
			get:     config,
			pool:    &tenantClients{client: &fakeIAS{}},
			wantURL: "https://t.accounts.ondemand.com",
		},
		"CredentialsRejected": {
			reason:  "credentials IAS rejected are told on the ProviderConfig, once: IAS locks a user after a few failed logons, so its resources stop using them",
			get:     config,
			pool:    &tenantClients{client: &fakeIAS{}, rejected: true},
			events:  []string{string(eventRejected)},
			wantURL: "https://t.accounts.ondemand.com",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			usage := tc.usage
			if usage == nil {
				usage = resource.ModernTrackerFn(func(context.Context, resource.ModernManaged) error { return nil })
			}
			pool := tc.pool
			if pool == nil {
				pool = &tenantClients{}
			}
			kyma := tc.kyma
			if kyma == "" {
				kyma = "kcp"
			}
			log := &fakes.Events{}
			c := &connector{shared: shared{kube: &test.MockClient{MockGet: tc.get}, recorder: log}, usage: usage, tenantClients: pool.clients(), logons: pool.logons(),
				providerConfigs: tenantconfig.Resolver{Certs: ias.NewClientCerts(8), KymaNamespace: kyma}, told: newToldOnce(clock.RealClock{})}
			cr := &v1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "kcp"}}
			cr.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: apisv1alpha1.ClusterProviderConfigKind, Name: "default"})
			_, err := c.Connect(context.Background(), cr)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s\nConnect error: -want +got:\n%s", tc.reason, diff)
			}
			if pool.got.URL != tc.wantURL {
				t.Errorf("%s\nclient for tenant %q, want %q", tc.reason, pool.got.URL, tc.wantURL)
			}
			if diff := cmp.Diff(tc.events, log.Reasons()); diff != "" {
				t.Errorf("%s\nevents: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
