package iasapplication

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	apisv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/tenantconfig"
)

// A start observes every IASApplication once, and each observe reads its
// tenant's listing, which IAS pages out one page of a hundred apps after the
// other, each a round trip. So a start lists every tenant at once, while
// the caches fill, and each resource is observed as soon as a page shows its
// app, instead of all of them after the last page.

// tenantLister starts the first listing of every tenant a ProviderConfig or
// ClusterProviderConfig names. The platform's ClusterProviderConfigs come
// first and are read from the API server (direct): a few reads, and their
// listings, the longest part of a start at thousands of runtimes, begin at
// once instead of after the cache of the Kyma namespace's Secrets has filled.
// The namespaces' configs are read through the manager's client (cached):
// each is checked against every ClusterProviderConfig's user, and read from
// the API server each check would cost a read of every platform credentials
// Secret per namespaced config, thousands at each start in a namespace of
// many configs. A tenant that no IASApplication uses costs one listing.
type tenantLister struct {
	reader, direct  client.Reader
	providerConfigs tenantconfig.Resolver
	listings        listingStarter
	log             logging.Logger
}

// NeedLeaderElection: only the leader calls IAS.
func (tenantLister) NeedLeaderElection() bool { return true }

// Start starts the listings and returns; a config that does not resolve is left
// to the observes of its resources, which report why on them.
func (l tenantLister) Start(ctx context.Context) error {
	cpcs := &apisv1alpha1.ClusterProviderConfigList{}
	if err := l.direct.List(ctx, cpcs); err != nil {
		l.log.Debug("Cannot list ClusterProviderConfigs to list their tenants at start", "error", err)
	}
	for _, pc := range cpcs.Items {
		// As a resource in the Kyma CRs' namespace uses it.
		l.start(ctx, l.direct, referring(l.providerConfigs.DefaultNamespace(), apisv1alpha1.ClusterProviderConfigKind, pc.Name))
	}
	pcs := &apisv1alpha1.ProviderConfigList{}
	if err := l.reader.List(ctx, pcs); err != nil {
		l.log.Debug("Cannot list ProviderConfigs to list their tenants at start", "error", err)
	}
	for _, pc := range pcs.Items {
		l.start(ctx, l.reader, referring(pc.Namespace, apisv1alpha1.ProviderConfigKind, pc.Name))
	}
	return nil
}

// start resolves the config ref names, reading with kube, and starts its
// tenant's listing.
func (l tenantLister) start(ctx context.Context, kube client.Reader, ref *v1alpha1.IASApplication) {
	cfg, err := l.providerConfigs.Resolve(ctx, kube, ref)
	if err == nil {
		err = l.listings.StartListing(cfg.Tenant)
	}
	if err != nil {
		l.log.Debug("Cannot list the tenant at start", "providerConfig", ref.GetProviderConfigReference().Name, "error", err)
	}
}

// referring is an IASApplication in the namespace that uses the config: the
// tenant is resolved as for a resource.
func referring(namespace, kind, name string) *v1alpha1.IASApplication {
	cr := &v1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Namespace: namespace}}
	cr.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: kind, Name: name})
	return cr
}

// listingStarter starts the first listing of a tenant (inventory.Tenants).
type listingStarter interface {
	StartListing(ias.Tenant) error
}

// listingWaiter holds back a reconcile until a tenant's first listing shows
// the app with the UUID; see inventory.Tenants.WhenListed.
type listingWaiter interface {
	WhenListed(id string, fn func()) bool
}

// enqueueWhenListed enqueues IASApplications as controller-runtime's default
// handler does, but an existing one from the first list of the cache only once
// its tenant's first listing has shown its app: its worker would wait for that.
type enqueueWhenListed struct {
	handler.EnqueueRequestForObject
	listings listingWaiter
}

// Create implements handler.EventHandler.
func (h *enqueueWhenListed) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if id := meta.GetExternalName(e.Object); e.IsInInitialList && id != "" && !meta.WasDeleted(e.Object) &&
		h.listings.WhenListed(id, func() { h.EnqueueRequestForObject.Create(ctx, e, q) }) {
		return
	}
	h.EnqueueRequestForObject.Create(ctx, e, q)
}
