// Command provider runs provider-eventing-auth: the Crossplane provider that gives
// every Kyma runtime an OIDC application in SAP Cloud Identity Services.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	"go.uber.org/zap/zapcore"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
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

// version is the package version this binary was built for; hack/xpkg.sh sets it.
var version = "dev"

func main() {
	var (
		debugLog         = flag.Bool("debug", false, "Run with debug logging.")
		leaderElection   = flag.Bool("leader-election", false, "Use leader election for the controller manager.")
		leaderElectionNS = flag.String("leader-election-namespace", "", "Namespace of the leader election Lease; default the pod's own (needed outside a cluster).")
		syncInterval     = flag.Duration("sync", time.Hour, "How often all resources are re-listed from the API server cache.")
		pollInterval     = flag.Duration("poll", 5*time.Minute, "How often each resource is checked against IAS and the runtimes (drift detection).")
		pollJitter       = flag.Duration("poll-jitter", 0, "Random spread added to each poll; default 10% of --poll.")
		maxReconcileRate = flag.Int("max-reconcile-rate", 10, "The concurrent reconciles per controller.")
		pollRate         = flag.Int("poll-rate", 100, "Routine polls per second across all managed resources, at most; 100 polls 30,000 resources (15,000 runtimes) every 5m.")
		kubeQPS          = flag.Float64("kube-api-qps", 100, "Requests per second to the management cluster's API server (burst: twice as many).")
		mgmtPolicies     = flag.Bool("enable-management-policies", true, "Enable support for spec.managementPolicies.")
		metricsAddr      = flag.String("metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint.")
		probeAddr        = flag.String("health-probe-bind-address", ":8081", "Address of the health and readiness probes.")
		pprofAddr        = flag.String("pprof-bind-address", "", "Address of Go's pprof endpoints, to profile memory and CPU; empty: off.")
		iasTimeout       = flag.Duration("ias-timeout", 15*time.Second, "Timeout of each attempt of each IAS call.")
		iasSecretCheck   = flag.Duration("ias-secret-check", iasapplication.DefaultSecretCheck, "How often each app's api secrets are listed in IAS at the least; between listings the published one is taken as the status records it.")
		iasInventoryAge  = flag.Duration("ias-inventory-age", iasapplication.DefaultInventoryAge, "How old the listing of all the tenant's applications that polls read may be (at most --poll): an app deleted or changed in IAS is found within --poll plus this.")
		iasListSettle    = flag.Duration("ias-list-settle", iasapplication.DefaultListSettle, "After a create of an IAS application got no answer, how long to wait for IAS's lists to show the application before creating it again.")
		runtimeTimeout   = flag.Duration("runtime-timeout", kymaruntime.DefaultTimeout, "Timeout of each call to a Kyma runtime's API server.")
		runtimeConnect   = flag.Duration("runtime-connect-timeout", kymaruntime.DefaultConnectTimeout, "Timeout of connecting to a Kyma runtime's API server, TLS handshake included.")
		runtimeDeletion  = flag.Duration("runtime-unreachable-deletion-timeout", runtimesecret.DefaultUnreachableDeletion, "How long deleting a RuntimeSecret waits for a runtime that does not answer; then it completes with a Warning event naming the Secret that may be left there.")
		iasRejected      = flag.Duration("ias-rejected-credentials-backoff", breaker.DefaultRejectedDelay, "After IAS rejected a ProviderConfig's credentials (401 or 403), how long until one probe with the same credentials; a change of the credentials Secret is tried at once.")
		kymaBridge       = flag.Bool("kyma-bridge", true, "Keep one EventingAuth composite resource per Kyma CR.")
		watcherAddr      = flag.String("runtime-watcher-address", "", "Address on which to receive Kyma runtime-watcher events, which repair a runtime's Secret within a second of its change; empty: off. Reachable only through the control plane's gateway (see docs/operations.md).")
		watcherComponent = flag.String("runtime-watcher-component", runtimewatcher.DefaultComponent, "The component in the events' path /v2/<component>/event: the Watcher CR's spec.manager.")
		runtimeClients   = flag.Int("runtime-client-cache-size", kymaruntime.DefaultCacheSize, "The most runtime clients kept at once, one per kubeconfig (least recently used dropped first).")
	)
	flag.Parse()
	if os.Getenv("GOGC") == "" {
		// Most of the heap is the informer cache, which lives as long as the
		// process: Go's default target of 100% garbage on top of it doubled the
		// resident memory for little GC work saved (see docs/performance.md, "Memory").
		debug.SetGCPercent(50)
	}

	level := zapcore.InfoLevel
	if *debugLog {
		level = zapcore.DebugLevel
	}
	zl := zap.New(zap.Level(level))
	ctrl.SetLogger(zl)
	log := logging.NewLogrLogger(zl.WithName("provider-eventing-auth"))

	cfg, err := ctrl.GetConfig()
	exitOn(err, "cannot get API server config")

	scheme := runtime.NewScheme()
	exitOn(clientgoscheme.AddToScheme(scheme), "cannot add Kubernetes APIs to scheme")
	exitOn(apis.AddToScheme(scheme), "cannot add provider APIs to scheme")
	exitOn(apiextensionsv1.AddToScheme(scheme), "cannot add CRDs to scheme")

	// Each new runtime takes several writes; crossplane-runtime's 5 x
	// --max-reconcile-rate held a bring-up back more than IAS did (the API
	// writes per runtime are in docs/performance.md).
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(*kubeQPS), int(2**kubeQPS)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		NewClient: func(cfg *rest.Config, o client.Options) (client.Client, error) {
			c, err := client.New(cfg, o)
			if err != nil {
				return nil, err
			}
			return kube.SkipUnchangedStatus(c, o.Cache.Reader), nil
		},
		Cache: cache.Options{
			SyncPeriod: syncInterval,
			// Controllers wait for their CRDs; their schemas need not be cached.
			ByObject: map[client.Object]cache.ByObject{&apiextensionsv1.CustomResourceDefinition{}: {Transform: customresourcesgate.TransformStripCRDSchema}},
			// managedFields are a large part of every cached object and never read:
			// memory per runtime matters at thousands of them.
			DefaultTransform: cache.TransformStripManagedFields(),
		},
		LeaderElection:             *leaderElection,
		LeaderElectionID:           "crossplane-leader-election-provider-eventing-auth",
		LeaderElectionResourceLock: "leases",
		LeaderElectionNamespace:    *leaderElectionNS,
		Metrics:                    metricsserver.Options{BindAddress: *metricsAddr},
		HealthProbeBindAddress:     *probeAddr,
		PprofBindAddress:           *pprofAddr,
		// The manager runs as long as the process, so the broadcaster it
		// cannot stop leaks nothing.
		EventBroadcaster: newEventBroadcaster(), //nolint:staticcheck // see above
	})
	exitOn(err, "cannot create controller manager")
	exitOn(mgr.AddHealthzCheck("healthz", healthz.Ping), "cannot add health check")
	exitOn(mgr.AddReadyzCheck("readyz", healthz.Ping), "cannot add ready check")

	bm := breaker.NewMetrics(metrics.Registry)
	mm := managed.NewMRMetricRecorder()
	sm := statemetrics.NewMRStateMetrics()
	metrics.Registry.MustRegister(mm, sm)

	o := reconciler.Options{
		Options: controller.Options{
			Logger:                  log,
			GlobalRateLimiter:       ratelimiter.NewGlobal(*maxReconcileRate),
			PollInterval:            *pollInterval,
			MaxConcurrentReconciles: *maxReconcileRate,
			Features:                &feature.Flags{},
			MetricOptions:           &controller.MetricOptions{PollStateMetricInterval: time.Minute, MRMetrics: mm, MRStateMetrics: sm},
		},
		PollJitter:         *pollJitter,
		Polls:              reconciler.NewPollBudget(*pollRate),
		ManagementPolicies: *mgmtPolicies,
		SetupFailed:        func(err error) { exitOn(err, "controller setup failed") },
	}
	pool := ias.NewPool(ias.PoolOptions{Timeout: *iasTimeout, Metrics: ias.NewMetrics(metrics.Registry),
		Breakers: ias.NewBreakers(*iasRejected, bm)})
	var watcher *runtimewatcher.Listener
	if *watcherAddr != "" {
		watcher = runtimewatcher.New(runtimewatcher.Options{Addr: *watcherAddr, Component: *watcherComponent,
			Metrics: runtimewatcher.NewMetrics(metrics.Registry), Log: zl.WithName("runtime-watcher")},
			runtimesecret.Targets{Reader: mgr.GetClient()})
	}
	configs := eacontroller.Configs{
		IASApplication: iasapplication.Config{IAS: pool, Inventories: inventory.New(pool, inventory.NewMetrics(metrics.Registry)),
			ListSettle: *iasListSettle, InventoryAge: *iasInventoryAge, SecretCheck: *iasSecretCheck,
			SecretMetrics: secretmetrics.New(metrics.Registry)}.Defaulted(*pollInterval),
		RuntimeSecret: runtimesecret.Config{UnreachableDeletion: *runtimeDeletion,
			Runtimes: kymaruntime.NewClients(kymaruntime.Options{Size: *runtimeClients, Timeout: *runtimeTimeout, ConnectTimeout: *runtimeConnect,
				Metrics: kymaruntime.NewMetrics(metrics.Registry), Breakers: kymaruntime.NewBreakers(bm)}),
			Watcher: watcher}.Defaulted(),
		KymaBridge: kymabridge.Config{Enabled: *kymaBridge}.Defaulted(*pollInterval, *maxReconcileRate),
	}
	exitOn(eacontroller.SetupGated(mgr, o.Defaulted(), configs), "cannot set up controllers")
	log.Info("Starting provider", "version", version, "poll", pollInterval.String(), "pollRate", *pollRate, "maxReconcileRate", *maxReconcileRate)
	exitOn(mgr.Start(ctrl.SetupSignalHandler()), "cannot start controller manager")
}

func exitOn(err error, msg string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "provider-eventing-auth: %s: %v\n", msg, err)
		os.Exit(1)
	}
}
