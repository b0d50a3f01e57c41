// Package provider builds the provider: the controller manager with the
// client and cache that ship, and every part the controllers use (the IAS
// pool, the tenant inventories, the runtime clients, the circuits, the
// runtime-watcher listener, the metrics), from one Settings value. main runs
// it with its flags, the integration suite with its own settings: what is
// tested is what ships; a test may change a setting, never leave a part out.
package provider

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kyma-project/provider-eventing-auth/apis"
	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/tenantconfig"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/kube"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/kymaruntime"
	eacontroller "github.com/kyma-project/provider-eventing-auth/internal/controller"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/kymabridge"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/runtimesecret"
	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
	"github.com/kyma-project/provider-eventing-auth/internal/secretmetrics"
)

// Process is what a run of the provider needs besides its settings: where its
// metrics go and what it logs with.
type Process struct {
	// Metrics registers the provider's own metrics and crossplane-runtime's
	// managed resource metrics; main: controller-runtime's registry, which
	// the manager serves.
	Metrics prometheus.Registerer
	Log     logr.Logger
	// SetupFailed is told when a controller that waited for its CRDs cannot
	// be set up.
	SetupFailed func(error)
	// Again: this process already ran controllers of the same names (a test
	// that restarts the provider in process).
	Again bool
}

// Provider is a built provider, ready to start.
type Provider struct {
	Manager ctrl.Manager
	// Runtimes are the runtime clients with their circuits.
	Runtimes *kymaruntime.Clients
	// Watcher is the runtime-watcher listener; nil when off.
	Watcher *runtimewatcher.Listener
}

// clientCerts is how many parsed client certificates are kept: each
// ProviderConfig has one, two around a renewal.
const clientCerts = 64

// New builds the provider against the management cluster at cfg.
func New(cfg *rest.Config, s Settings, p Process) (*Provider, error) {
	d := s.derive()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apis.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("cannot build the scheme: %w", err)
		}
	}
	mc := managementConfig(cfg, s.KubeQPS)
	events := newEventBroadcaster()
	mo := managerOptions(s, scheme, p.Again, events, p.Log)
	if s.MetricsSecure {
		// As kubebuilder scaffolds it: TokenReview and SubjectAccessReview
		// with the API server, a self-signed serving certificate.
		mo.Metrics.SecureServing, mo.Metrics.FilterProvider = true, authenticatedMetrics
	}
	mgr, err := ctrl.NewManager(mc, mo)
	if err != nil {
		return nil, fmt.Errorf("cannot create controller manager: %w", err)
	}
	// Events share the manager's connection to the API server.
	sink, err := newEventSink(mc, mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("cannot build the event sink: %w", err)
	}
	events.recordTo(sink)
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}

	bm := breaker.NewMetrics(p.Metrics)
	mm, sm := managed.NewMRMetricRecorder(), statemetrics.NewMRStateMetrics()
	p.Metrics.MustRegister(mm, sm)
	log := newReconcilerLogger(p.Log)
	o := reconciler.Options{
		Options: controller.Options{
			Logger:                  log,
			GlobalRateLimiter:       ratelimiter.NewGlobal(d.workers),
			PollInterval:            s.Poll,
			MaxConcurrentReconciles: d.workers,
			Features:                &feature.Flags{},
			MetricOptions:           &controller.MetricOptions{PollStateMetricInterval: s.StateMetricsInterval, MRMetrics: mm, MRStateMetrics: sm},
		},
		PollJitter:         d.pollJitter,
		Polls:              reconciler.NewPollBudget(s.PollRate),
		ManagementPolicies: s.ManagementPolicies,
		SetupFailed:        p.SetupFailed,
	}
	pool := ias.NewPool(ias.PoolOptions{Timeout: s.IASTimeout, BaseBackoff: s.IASBaseBackoff, MaxBackoff: s.IASMaxBackoff,
		TenantQPS: s.IASTenantQPS, TenantBurst: s.IASTenantBurst, LogonBackoff: s.IASRejectedBackoff, MaxNamespaced: s.IASMaxNamespacedCredentials,
		Metrics: ias.NewMetrics(p.Metrics), Breakers: ias.NewBreakers(s.IASRejectedBackoff, bm)})
	out := &Provider{Manager: mgr, Runtimes: kymaruntime.NewClients(kymaruntime.Options{Size: s.RuntimeClientCacheSize,
		Timeout: s.RuntimeTimeout, ConnectTimeout: s.RuntimeConnectTimeout, PlainHTTPLoopback: s.TestPlainHTTPLoopback,
		Metrics: kymaruntime.NewMetrics(p.Metrics), Breakers: kymaruntime.NewBreakers(bm, s.KymaNamespace)})}
	if s.WatcherAddr != "" {
		if out.Watcher, err = newWatcher(s, p, mgr); err != nil {
			return nil, err
		}
	}
	configs := eacontroller.Configs{
		IASApplication: iasapplication.Config{Logons: pool, TenantClients: inventory.New(pool, inventory.NewMetrics(p.Metrics), nil),
			ProviderConfigs: tenantconfig.Resolver{Certs: ias.NewClientCerts(clientCerts), KymaNamespace: s.KymaNamespace,
				PlainHTTPLoopback: s.TestPlainHTTPLoopback},
			ListSettle: s.IASListSettle, InventoryAge: d.inventoryAge, SecretCheck: s.IASSecretCheck,
			SecretMetrics: secretmetrics.New(p.Metrics),
			NameClaims:    kube.NameClaims{Writer: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: claimNamespace(s)}}.Defaulted(),
		RuntimeSecret: runtimeSecretConfig(s, out),
		KymaBridge:    kymabridge.Config{Enabled: s.KymaBridge, Resync: d.bridgeResync, CompositePoll: s.CompositePoll, Workers: d.workers},
	}
	if err := eacontroller.SetupGated(mgr, o, configs); err != nil {
		return nil, fmt.Errorf("cannot set up controllers: %w", err)
	}
	return out, nil
}

// managementConfig is cfg with the provider's request limits, answers
// without managedFields (kube.StripManagedFields), and HTTP/1.1. Each new
// runtime takes several writes; crossplane-runtime's 5 x --max-reconcile-rate
// held a bring-up back more than IAS did (the API writes per runtime are in
// docs/performance.md).
//
// HTTP/1.1: over HTTP/2 every request runs in a goroutine of its own, whose
// stack grows for the TLS write, with its headers compressed against a table
// that changes with every path; a connection per request in flight costs
// less CPU per runtime brought up and deleted. HTTP/2 pings an idle connection
// to find it dead; here TCP keepalive probes do: a watch on a connection that
// went dead without a word fails within managementKeepAlive's 30 s and is made
// again.
func managementConfig(cfg *rest.Config, qps float64) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(qps), int(2*qps)
	cfg.Wrap(kube.StripManagedFields)
	cfg.NextProtos = []string{"http/1.1"}
	// A warning of the API server that nobody here can act on, such as the one
	// about crossplane-runtime's finalizer name at every finalizer write, is
	// logged once per process, not once per write.
	cfg.WarningHandler, cfg.WarningHandlerWithContext = nil, ctrllog.NewKubeAPIWarningLogger(ctrllog.KubeAPIWarningLoggerOptions{Deduplicate: true})
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAliveConfig: managementKeepAlive}).DialContext
	}
	return cfg
}

// managementKeepAlive finds a connection to the API server dead after 15 s
// without traffic and 3 unanswered probes 5 s apart: 30 s, as client-go's
// HTTP/2 health check (a ping after 30 s idle, 15 s for its answer).
var managementKeepAlive = net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}

// managerOptions are the manager's options: the client that skips unchanged
// status writes, the cache without what no controller reads, the event
// broadcaster, the process's endpoints, and log, whose values controller-runtime
// adds at every reconcile are encoded only for a line written (lazyValues).
func managerOptions(s Settings, scheme *runtime.Scheme, again bool, events record.EventBroadcaster, log logr.Logger) ctrl.Options {
	return ctrl.Options{
		Logger:    lazyValues(log),
		Scheme:    scheme,
		NewClient: NewClient(s.KymaNamespace),
		Cache:     CacheOptions(s),
		MapperProvider: func(c *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
			m, err := apiutil.NewDynamicRESTMapper(c, hc)
			if err != nil {
				return nil, err
			}
			return kube.BuiltinMappings(m), nil
		},
		Controller: ctrlconfig.Controller{
			// A process that restarts its provider in place names its
			// controllers again.
			SkipNameValidation: ptr.To(again),
		},
		LeaderElection:             s.LeaderElection,
		LeaderElectionID:           "crossplane-leader-election-provider-eventing-auth",
		LeaderElectionResourceLock: "leases",
		LeaderElectionNamespace:    s.LeaderElectionNamespace,
		Metrics:                    metricsserver.Options{BindAddress: s.MetricsAddr},
		HealthProbeBindAddress:     s.ProbeAddr,
		PprofBindAddress:           s.PprofAddr,
		// The manager runs as long as the process, so the broadcaster it
		// cannot stop leaks nothing.
		EventBroadcaster: events, //nolint:staticcheck // see above
	}
}

// usedSecret tells the Secrets whose data the cache keeps: the runtimes'
// kubeconfigs (named kubeconfig-<runtime ID> by default) and the connection
// Secrets of IASApplications. Any other Secret the provider reads (a
// ProviderConfig's credentials, a kubeconfig named otherwise) is read from
// the API server and kept by kube.UsedSecrets.
func usedSecret(s *corev1.Secret) bool {
	if strings.HasPrefix(s.Name, runtimev1alpha1.DefaultKubeconfigPrefix) {
		return true
	}
	c := metav1.GetControllerOf(s)
	return c != nil && c.Kind == iasv1alpha1.IASApplicationKind && strings.HasPrefix(c.APIVersion, iasv1alpha1.Group+"/")
}

// NewClient is the manager's client: status writes that change nothing or
// tell of an instant are not sent, nor are empty connection Secrets; Secrets
// outside kymaNamespace, which the cache does not hold, are read from the API
// server.
func NewClient(kymaNamespace string) client.NewClientFunc {
	return func(cfg *rest.Config, o client.Options) (client.Client, error) {
		c, err := client.New(cfg, o)
		if err != nil {
			return nil, err
		}
		// Secrets the cache holds without their data, or not at all, are
		// read from the API server.
		direct, err := client.New(cfg, client.Options{Scheme: o.Scheme, Mapper: o.Mapper, HTTPClient: o.HTTPClient})
		if err != nil {
			return nil, err
		}
		return kube.SkipEmptyConnectionSecrets(kube.SkipTransientStatus(kube.SkipUnchangedStatus(kube.UsedSecrets(c, direct, kymaNamespace), o.Cache.Reader))), nil
	}
}

// CacheOptions are the informer cache's options.
func CacheOptions(s Settings) cache.Options {
	return cache.Options{
		SyncPeriod: &s.Sync,
		ByObject: map[client.Object]cache.ByObject{
			// Controllers wait for their CRDs; their schemas need not be cached.
			&apiextensionsv1.CustomResourceDefinition{}: {Transform: customresourcesgate.TransformStripCRDSchema},
			// Secrets are watched only where the runtimes' kubeconfigs live:
			// another namespace's never reach the process unless read. There,
			// the Secrets of other components keep no data in the cache.
			&corev1.Secret{}: {Namespaces: map[string]cache.Config{s.KymaNamespace: {}}, Transform: kube.StripUnusedSecrets(usedSecret)},
		},
		// managedFields are a large part of every cached object and never read:
		// memory per runtime matters at thousands of them.
		DefaultTransform: cache.TransformStripManagedFields(),
	}
}

// runtimeSecretConfig hands the RuntimeSecret controller the runtime-watcher
// listener and its events, if it runs.
func runtimeSecretConfig(s Settings, p *Provider) runtimesecret.Config {
	c := runtimesecret.Config{UnreachableDeletion: s.RuntimeUnreachableDeletion, Runtimes: p.Runtimes}
	if p.Watcher != nil {
		c.Watcher, c.Events = p.Watcher, p.Watcher.Source()
	}
	return c.Defaulted()
}
