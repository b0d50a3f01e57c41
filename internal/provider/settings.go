package provider

import (
	"flag"
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/tenantconfig"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/kymaruntime"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/runtimesecret"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
)

// Settings are every choice the provider runs with: main takes them from
// flags (Bind), a test from DefaultSettings with what it needs changed. New
// builds the same provider from either.
type Settings struct {
	Debug                   bool
	LeaderElection          bool
	LeaderElectionNamespace string
	// Sync is the cache's resync period.
	Sync time.Duration
	// Poll is how often each resource is checked; PollJitter spreads polls
	// (0: a tenth of Poll); PollRate bounds polls per second.
	Poll       time.Duration
	PollJitter time.Duration
	PollRate   int
	// MaxReconcileRate is the workers per controller and their global limit.
	MaxReconcileRate int
	// KubeQPS limits requests to the management API server (burst twice as many).
	KubeQPS            float64
	ManagementPolicies bool
	MetricsAddr        string
	// MetricsSecure serves metrics over HTTPS to callers the API server
	// authenticates and authorises for GET /metrics only.
	MetricsSecure bool
	ProbeAddr     string
	PprofAddr     string
	// StateMetricsInterval is how often the managed resource state metrics
	// are recorded.
	StateMetricsInterval time.Duration

	IASTimeout      time.Duration
	IASSecretCheck  time.Duration
	IASInventoryAge time.Duration
	IASListSettle   time.Duration
	// IASBaseBackoff and IASMaxBackoff bound the retries of one IAS call;
	// 0: the ias package's defaults.
	IASBaseBackoff, IASMaxBackoff time.Duration
	IASRejectedBackoff            time.Duration
	IASMaxNamespacedCredentials   int
	// IASTenantQPS and IASTenantBurst are each tenant URL's budget, which
	// the calls of all its ProviderConfigs together stay within.
	IASTenantQPS, IASTenantBurst int

	RuntimeTimeout             time.Duration
	RuntimeConnectTimeout      time.Duration
	RuntimeUnreachableDeletion time.Duration
	RuntimeClientCacheSize     int
	// TestPlainHTTPLoopback takes tenant URLs and kubeconfigs with plain
	// http to a loopback host: for tests only; the shipped install never
	// sets it, so no namespace's input reaches the provider's own ports.
	TestPlainHTTPLoopback bool

	KymaBridge bool
	// KymaNamespace is where the Kyma CRs and their kubeconfig Secrets live:
	// the one namespace a ClusterProviderConfig admits unless it names others,
	// and the only one whose Secrets the provider watches.
	KymaNamespace string
	// CompositePoll is the crossplane.io/poll-interval the bridge gives each
	// EventingAuth.
	CompositePoll time.Duration

	WatcherAddr      string
	WatcherComponent string
	// WatcherClientCA is a PEM file of the CAs a runtime's forwarded client
	// certificate must chain to; empty: any certificate names its runtime.
	WatcherClientCA string
	// WatcherAdvertise is where the other replicas reach this one's listener.
	WatcherAdvertise string
}

// DefaultSettings are the provider's defaults, its flags' defaults.
func DefaultSettings() Settings {
	return Settings{
		Sync:                        time.Hour,
		Poll:                        5 * time.Minute,
		PollRate:                    100,
		MaxReconcileRate:            10,
		KubeQPS:                     100,
		ManagementPolicies:          true,
		MetricsAddr:                 ":8080",
		MetricsSecure:               true,
		ProbeAddr:                   ":8081",
		StateMetricsInterval:        time.Minute,
		IASTimeout:                  15 * time.Second,
		IASSecretCheck:              iasapplication.DefaultSecretCheck,
		IASInventoryAge:             iasapplication.DefaultInventoryAge,
		IASListSettle:               iasapplication.DefaultListSettle,
		IASRejectedBackoff:          breaker.DefaultRejectedDelay,
		IASMaxNamespacedCredentials: ias.DefaultMaxNamespaced,
		IASTenantQPS:                ias.DefaultTenantQPS,
		IASTenantBurst:              ias.DefaultTenantBurst,
		RuntimeTimeout:              kymaruntime.DefaultTimeout,
		RuntimeConnectTimeout:       kymaruntime.DefaultConnectTimeout,
		RuntimeUnreachableDeletion:  runtimesecret.DefaultUnreachableDeletion,
		RuntimeClientCacheSize:      kymaruntime.DefaultCacheSize,
		KymaBridge:                  true,
		KymaNamespace:               tenantconfig.DefaultKymaNamespace,
		CompositePoll:               eventingauth.XRPollInterval,
		WatcherComponent:            runtimewatcher.DefaultComponent,
	}
}

// Bind registers the provider's flags on fs, each defaulting to what s holds.
func (s *Settings) Bind(fs *flag.FlagSet) {
	fs.BoolVar(&s.Debug, "debug", s.Debug, "Run with debug logging.")
	fs.BoolVar(&s.LeaderElection, "leader-election", s.LeaderElection, "Use leader election for the controller manager.")
	fs.StringVar(&s.LeaderElectionNamespace, "leader-election-namespace", s.LeaderElectionNamespace, "Namespace of the leader election Lease; default the pod's own (needed outside a cluster).")
	fs.DurationVar(&s.Sync, "sync", s.Sync, "How often all resources are re-listed from the API server cache.")
	fs.DurationVar(&s.Poll, "poll", s.Poll, "How often each resource is checked against IAS and the runtimes (drift detection).")
	fs.DurationVar(&s.PollJitter, "poll-jitter", s.PollJitter, "Random spread added to each poll; default 10% of --poll.")
	fs.IntVar(&s.MaxReconcileRate, "max-reconcile-rate", s.MaxReconcileRate, "The concurrent reconciles per controller.")
	fs.IntVar(&s.PollRate, "poll-rate", s.PollRate, "Routine polls per second across all managed resources, at most; 100 polls 30,000 resources (15,000 runtimes) every 5m.")
	fs.Float64Var(&s.KubeQPS, "kube-api-qps", s.KubeQPS, "Requests per second to the management cluster's API server (burst: twice as many).")
	fs.BoolVar(&s.ManagementPolicies, "enable-management-policies", s.ManagementPolicies, "Enable support for spec.managementPolicies.")
	fs.StringVar(&s.MetricsAddr, "metrics-bind-address", s.MetricsAddr, "Address of the Prometheus metrics endpoint.")
	fs.BoolVar(&s.MetricsSecure, "metrics-secure", s.MetricsSecure, "Serve metrics over HTTPS, only to callers whose bearer token the API server authenticates (TokenReview) and authorises for GET /metrics (SubjectAccessReview); false: plain HTTP to any caller, for a local run.")
	fs.StringVar(&s.ProbeAddr, "health-probe-bind-address", s.ProbeAddr, "Address of the health and readiness probes.")
	fs.StringVar(&s.PprofAddr, "pprof-bind-address", s.PprofAddr, "Address of Go's pprof endpoints, to profile memory and CPU; empty: off.")
	fs.DurationVar(&s.IASTimeout, "ias-timeout", s.IASTimeout, "Timeout of each attempt of each IAS call.")
	fs.DurationVar(&s.IASSecretCheck, "ias-secret-check", s.IASSecretCheck, "How often each app's api secrets are listed in IAS at the least; between listings the published one is taken as the status records it.")
	fs.DurationVar(&s.IASInventoryAge, "ias-inventory-age", s.IASInventoryAge, "How old the listing of all the tenant's applications that polls read may be (at most --poll): an app deleted or changed in IAS is found within --poll plus this.")
	fs.DurationVar(&s.IASListSettle, "ias-list-settle", s.IASListSettle, "After a create of an IAS application got no answer, how long to wait for IAS's lists to show the application before creating it again.")
	fs.DurationVar(&s.RuntimeTimeout, "runtime-timeout", s.RuntimeTimeout, "Timeout of each call to a Kyma runtime's API server.")
	fs.DurationVar(&s.RuntimeConnectTimeout, "runtime-connect-timeout", s.RuntimeConnectTimeout, "Timeout of connecting to a Kyma runtime's API server, TLS handshake included.")
	fs.DurationVar(&s.RuntimeUnreachableDeletion, "runtime-unreachable-deletion-timeout", s.RuntimeUnreachableDeletion, "How long deleting a RuntimeSecret waits for a runtime that does not answer; then it completes with a Warning event naming the Secret that may be left there.")
	fs.IntVar(&s.IASTenantQPS, "ias-tenant-qps", s.IASTenantQPS, "Requests per second to one IAS tenant URL from every ProviderConfig naming it together; each ProviderConfig's rateLimit applies within it (IAS allows 50 per client IP address).")
	fs.IntVar(&s.IASTenantBurst, "ias-tenant-burst", s.IASTenantBurst, "Burst of --ias-tenant-qps.")
	fs.DurationVar(&s.IASRejectedBackoff, "ias-rejected-credentials-backoff", s.IASRejectedBackoff, "How long after IAS rejected a ProviderConfig's credentials (401 or 403) one probe is made with them. "+
		"Meanwhile "+breaker.RejectedRule+".")
	fs.IntVar(&s.IASMaxNamespacedCredentials, "ias-max-namespaced-credentials", s.IASMaxNamespacedCredentials,
		"How many sets of credentials, and users, of namespaced ProviderConfigs the provider keeps state for, each; a new one beyond waits until others are unused for an hour. The platform's are not counted.")
	fs.StringVar(&s.KymaNamespace, "kyma-namespace", s.KymaNamespace, "Namespace of the Kyma CRs and their kubeconfig Secrets: the only namespace whose Secrets the provider watches, and the one a ClusterProviderConfig admits unless its spec.namespaces or spec.namespaceSelector admit others.")
	fs.BoolVar(&s.KymaBridge, "kyma-bridge", s.KymaBridge, "Keep one EventingAuth composite resource per Kyma CR.")
	fs.DurationVar(&s.CompositePoll, "composite-poll-interval", s.CompositePoll, "How often Crossplane core re-runs each EventingAuth's composition when nothing changed (its crossplane.io/poll-interval); it watches the composed resources, so this is only a safety net. The composition function's --ttl wins when set.")
	fs.StringVar(&s.WatcherAddr, "runtime-watcher-address", s.WatcherAddr, "Address on which to receive Kyma runtime-watcher events, which repair a runtime's Secret within a second of its change; empty: off. Reachable only through the control plane's gateway (see docs/operations.md).")
	fs.StringVar(&s.WatcherClientCA, "runtime-watcher-client-ca", s.WatcherClientCA, "PEM file of one or more CA certificates: a runtime-watcher event is taken only if the client certificate the gateway forwards chains to one of them and is valid now (Lifecycle Manager's CA Issuer, see docs/operations.md); others are refused with 401 before anything else.")
	fs.StringVar(&s.WatcherAdvertise, "runtime-watcher-advertise-address", s.WatcherAdvertise, "With --leader-election: host:port at which the other replicas reach this replica's runtime-watcher listener (the pod's IP and the listener's port); a standby hands every event it gets to the leader there.")
	fs.StringVar(&s.WatcherComponent, "runtime-watcher-component", s.WatcherComponent, "The component in the events' path /v2/<component>/event: the Watcher CR's spec.manager.")
	fs.BoolVar(&s.TestPlainHTTPLoopback, "test-plain-http-loopback", s.TestPlainHTTPLoopback, "For tests only: take tenant URLs and kubeconfigs with plain http to a loopback host. Off, every tenant and runtime is reached over https.")
	fs.IntVar(&s.RuntimeClientCacheSize, "runtime-client-cache-size", s.RuntimeClientCacheSize, "The most runtime clients kept at once, one per kubeconfig (least recently used dropped first).")
}

// derived are the values computed from the poll interval and the workers,
// once, here.
type derived struct {
	pollJitter   time.Duration // a tenth of the poll, unless set
	inventoryAge time.Duration // at most the poll: no poll reads a listing older than itself
	bridgeResync time.Duration // the poll: an EventingAuth deleted by hand comes back
	workers      int
}

func (s Settings) derive() derived {
	d := derived{pollJitter: s.PollJitter, inventoryAge: s.IASInventoryAge, bridgeResync: s.Poll,
		workers: max(s.MaxReconcileRate, 1)}
	if d.pollJitter <= 0 {
		d.pollJitter = s.Poll / 10
	}
	if d.inventoryAge <= 0 {
		d.inventoryAge = iasapplication.DefaultInventoryAge
	}
	if s.Poll > 0 {
		d.inventoryAge = min(d.inventoryAge, s.Poll)
	}
	return d
}
