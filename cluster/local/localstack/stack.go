// Package localstack runs the whole of provider-eventing-auth on this machine:
// a management control plane with Crossplane core, kube-controller-manager's
// garbage collector and the composition functions as local processes, a second
// control plane as the Kyma runtime, the IAS simulator, and the provider. The
// e2e test and `make local-run` use it. Everything is built from the Go module
// proxy; nothing runs in containers.
package localstack

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	pkgv1beta1 "github.com/crossplane/crossplane/apis/v2/pkg/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/provider-eventing-auth/apis"
	apisv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/skrwebhook"
)

// Namespaces of the stack.
const (
	CrossplaneNamespace = "crossplane-system"
	KCPNamespace        = "kcp-system"
	// PlatformGlobalAccount is the ClusterProviderConfig's globalAccount.
	PlatformGlobalAccount = "ga-platform"
)

// CoreSyncInterval is Crossplane core's --sync-interval on the stack, as
// docs/operations.md gives it to landscapes (core's default is 1h).
const CoreSyncInterval = 10 * time.Hour

// Options of the stack.
type Options struct {
	// Root is the repository's root directory.
	Root string
	// Assets holds kube-apiserver, etcd, kubectl and kube-controller-manager.
	Assets string
	// Tools holds crossplane-core, crane and Crossplane's CRDs.
	Tools string
	// Work receives kubeconfigs, certificates and every process's log.
	Work string
	// ProviderArgs are passed to the provider, e.g. a short --poll.
	ProviderArgs []string
	// ProviderLater leaves the provider to StartProvider, for what must happen
	// before it runs (a migration, for one).
	ProviderLater bool
	// ReplicasAsInstalled runs the provider as cluster/install.yaml's
	// DeploymentRuntimeConfig asks: its replicas (two, with leader election)
	// and its container's arguments, the runtime-watcher port behind a Service
	// stand-in. Unset: one process, as measured in the benchmarks.
	ReplicasAsInstalled bool
	// CorePollInterval is Crossplane core's --poll-interval; default 10s, so
	// that packages settle quickly in tests (a landscape runs core's 1m).
	CorePollInterval time.Duration
	// CoreSyncInterval is Crossplane core's --sync-interval; default
	// CoreSyncInterval.
	CoreSyncInterval time.Duration
	// CoreArgs are further flags of Crossplane core, as a landscape sets them
	// through its Helm values (e.g. --max-concurrent-reconciles).
	CoreArgs []string
	// GarbageCollectorQPS is kube-controller-manager's --kube-api-qps (its
	// burst is twice that); 0 keeps kube-controller-manager's default of 20.
	// The garbage collector deletes every EventingAuth and its composed
	// resources, a GET and a DELETE each, so its rate bounds how fast many
	// Kyma CRs can be deleted (docs/performance.md).
	GarbageCollectorQPS int
	// FunctionArgs are further flags of a composition function, by its name
	// (e.g. function-eventing-auth's --ttl).
	FunctionArgs map[string][]string
	// AuditLog has the management API server write an audit log (AuditLog):
	// every write request, and every request of the garbage collector.
	AuditLog bool
	// Sim sets the IAS simulator's latency and rate limit (its credentials are
	// the stack's own).
	Sim iassim.Options
	// Inactive leaves out the ManagedResourceActivationPolicy of
	// cluster/install.yaml: the provider's managed resource definitions stay
	// inactive (safe-start) until Activate.
	Inactive bool
}

// Stack is a running local installation.
type Stack struct {
	Work string
	// Kube and RuntimeKube are clients of the management cluster and the runtime;
	// MgmtKubeconfig and RuntimeKubeconfig paths of admin kubeconfigs for them.
	Kube, RuntimeKube                 client.Client
	MgmtKubeconfig, RuntimeKubeconfig string
	// RuntimeKubeconfigData is what goes into kubeconfig-<runtime ID>.
	RuntimeKubeconfigData []byte
	// Sim is the IAS tenant.
	Sim *iassim.Running
	// Registry is the host:port of the OCI registry on loopback.
	Registry string
	// CoreMetrics is the host:port where Crossplane core serves its metrics.
	CoreMetrics string
	// WatcherAddr is where the provider listens for runtime-watcher events;
	// Watcher forwards them from the runtime API server.
	WatcherAddr string
	Watcher     *skrwebhook.Forwarder
	// WatcherClientCA is the file of the CA the runtimes' client
	// certificates chain to, the provider's --runtime-watcher-client-ca.
	WatcherClientCA string
	// AuditLog is the file of the management API server's audit log, with
	// Options.AuditLog (ReadAudit reads it).
	AuditLog string
	// auditUnread is how often in a row ReadAudit found a line it could not
	// parse at auditUnreadAt.
	auditUnread   int
	auditUnreadAt int64

	o             Options
	mgmt, runtime *envtest.Environment
	pkgRuntime    *packageRuntime
	pushed        map[string]bool
	runtimeID     atomic.Value // string: the ID AddRuntime gave the runtime
	mu            sync.Mutex   // guards procs
	procs         []*process
	closers       []func()
}

// InstallVersion is the version the stack publishes and cluster/install.yaml installs.
const InstallVersion = "v0.1.0"

// startStep is a step of Start: what it does, for an error, and how.
type startStep struct {
	what string
	run  func(context.Context) error
}

// Start brings the stack up; on failure what was started is stopped again.
func Start(ctx context.Context, o Options) (*Stack, error) {
	s := &Stack{Work: o.Work, o: o, pushed: map[string]bool{}}
	s.runtimeID.Store("")
	steps := []startStep{
		{"start the management cluster and the Kyma runtime", s.controlPlanes},
		{"start the runtime-watcher's stand-in (the runtime's skr-webhook and the gateway) and apply cluster/watcher.yaml", s.runtimeWatcher},
		{"serve an OCI registry on loopback and publish the packages " + InstallVersion + " to it", s.publish},
		{"start Crossplane core and the package runtime", s.crossplane},
		{"install the Configuration package with cluster/install.yaml", s.install},
		// After the XRD: the collector learns new kinds only every 30s.
		{"start kube-controller-manager's garbage collector", s.garbageCollector},
		{"start the IAS simulator", s.tenant},
	}
	if !o.ProviderLater {
		steps = append(steps, startStep{"run the provider", s.StartProvider})
	}
	for _, st := range steps {
		if err := st.run(ctx); err != nil {
			s.Stop()
			return nil, fmt.Errorf("cannot %s: %w (logs in %s)", st.what, err, s.Work)
		}
	}
	return s, nil
}

// Stop ends every process and control plane.
func (s *Stack) Stop() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.mu.Lock()
	procs := s.procs
	s.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].stop()
	}
	if s.Sim != nil {
		_ = s.Sim.Close()
	}
	for _, e := range []*envtest.Environment{s.mgmt, s.runtime} {
		if e != nil {
			_ = e.Stop()
		}
	}
}

// ProviderRestarts counts how often the provider exited and was restarted.
func (s *Stack) ProviderRestarts() int {
	if s.pkgRuntime == nil {
		return 0
	}
	return s.pkgRuntime.providerRestarts()
}

// Crossplane is Crossplane core's process.
func (s *Stack) Crossplane() *process { return s.named("crossplane") }

// Named is the latest process started under name (its log's name: e.g.
// kube-controller-manager or function-eventing-auth); nil if none.
func (s *Stack) Named(name string) *process { return s.named(name) }

func (s *Stack) named(name string) *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.procs) - 1; i >= 0; i-- {
		if s.procs[i].name == name {
			return s.procs[i]
		}
	}
	return nil
}

// Provider is the running provider's process; nil before it starts.
func (s *Stack) Provider() *process {
	if s.pkgRuntime == nil {
		return nil
	}
	return s.pkgRuntime.current()
}

func (s *Stack) controlPlanes(ctx context.Context) error {
	s.mgmt = &envtest.Environment{
		CRDDirectoryPaths: []string{
			filepath.Join(s.o.Tools, "crds"),
			// The Kyma CRD, which the lifecycle manager installs in a landscape,
			// and eventing-auth-manager's, for the migration.
			filepath.Join(s.o.Root, "test", "crds"),
		},
		ErrorIfCRDPathMissing: true,
	}
	if s.o.AuditLog {
		if err := s.auditLog(); err != nil {
			return err
		}
	}
	s.runtime = &envtest.Environment{}
	started := make(chan error, 1)
	go func() { _, err := s.runtime.Start(); started <- err }()
	_, err := s.mgmt.Start()
	if rtErr := <-started; err == nil {
		err = rtErr
	}
	if err != nil {
		return err
	}
	var mgmtCfg, rtCfg *rest.Config
	if s.MgmtKubeconfig, _, mgmtCfg, err = kubeconfig(s.mgmt, s.Work, "management"); err != nil {
		return err
	}
	if s.RuntimeKubeconfig, s.RuntimeKubeconfigData, rtCfg, err = kubeconfig(s.runtime, s.Work, "runtime"); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	_ = apis.AddToScheme(scheme)
	_ = pkgv1beta1.AddToScheme(scheme)
	if s.Kube, err = client.New(mgmtCfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if s.RuntimeKube, err = client.New(rtCfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	for _, ns := range []string{CrossplaneNamespace, KCPNamespace} {
		if err := s.Kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	return nil
}

// kubeconfig writes an admin kubeconfig of env into dir.
func kubeconfig(env *envtest.Environment, dir, name string) (string, []byte, *rest.Config, error) {
	u, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", nil, nil, err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return "", nil, nil, err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	return path, kc, u.Config(), os.WriteFile(path, kc, 0o600)
}

// garbageCollector runs kube-controller-manager with only the garbage collector,
// which deletes an EventingAuth when its Kyma CR goes, and composed resources
// with their EventingAuth.
func (s *Stack) garbageCollector(ctx context.Context) error {
	addr, err := FreeAddr()
	if err != nil {
		return err
	}
	port := addr[strings.LastIndex(addr, ":")+1:]
	// A user of its own, as in a cluster, so that the audit log tells its
	// requests apart.
	u, err := s.mgmt.AddUser(envtest.User{Name: GarbageCollectorUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(s.Work, "kube-controller-manager.kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}
	args := []string{"--kubeconfig=" + kubeconfig, "--controllers=garbagecollector", "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port=" + port, "--use-service-account-credentials=false",
		"--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig}
	if qps := s.o.GarbageCollectorQPS; qps > 0 {
		args = append(args, fmt.Sprintf("--kube-api-qps=%d", qps), fmt.Sprintf("--kube-api-burst=%d", 2*qps))
	}
	p, err := s.start("kube-controller-manager", nil, filepath.Join(s.o.Assets, "kube-controller-manager"), args...)
	if err != nil {
		return err
	}
	return waitListening(ctx, p, addr)
}

// crossplane starts Crossplane core with the External package runtime: it
// installs packages and leaves running them to the package runtime here, which
// starts each function over mTLS and the provider as local processes. The
// Usage webhook is registered by URL.
func (s *Stack) crossplane(ctx context.Context) error {
	ca, err := newCA()
	if err != nil {
		return err
	}
	certs := filepath.Join(s.Work, "certs")
	for _, d := range []string{"core-client", "core-server"} {
		if err := ca.writeCerts(filepath.Join(certs, d), "crossplane"); err != nil {
			return err
		}
	}
	var ports [3]string
	for i := range ports {
		a, err := FreeAddr()
		if err != nil {
			return err
		}
		ports[i] = a[strings.LastIndex(a, ":")+1:]
	}
	webhook := "127.0.0.1:" + ports[0]
	s.CoreMetrics = "127.0.0.1:" + ports[1]
	// The package manager does not make its cache directory; without one no
	// package can be parsed.
	for _, d := range []string{"xpkg-cache", "xfn-cache"} {
		if err := os.MkdirAll(filepath.Join(s.Work, d), 0o755); err != nil {
			return err
		}
	}
	p, err := s.start("crossplane", []string{"KUBECONFIG=" + s.MgmtKubeconfig, "POD_NAMESPACE=" + CrossplaneNamespace},
		filepath.Join(s.o.Tools, "crossplane-core"), append([]string{"core", "start",
			"--package-runtime=External",
			"--tls-server-certs-dir=" + filepath.Join(certs, "core-server"),
			"--tls-client-certs-dir=" + filepath.Join(certs, "core-client"),
			"--webhook-port=" + ports[0], "--metrics-port=" + ports[1], "--health-probe-port=" + ports[2],
			"--xpkg-cache-dir=" + filepath.Join(s.Work, "xpkg-cache"), "--xfn-cache-dir=" + filepath.Join(s.Work, "xfn-cache"),
			"--poll-interval=" + cmp.Or(s.o.CorePollInterval, 10*time.Second).String(),
			// The setting docs/operations.md gives landscapes: with core's default
			// of 100, every composed resource's write wakes its XR at once; fewer
			// workers let those wake-ups coalesce (docs/performance.md).
			"--max-concurrent-reconciles=10",
			// The resync docs/operations.md gives landscapes: each resync re-runs
			// every EventingAuth.
			"--sync-interval=" + cmp.Or(s.o.CoreSyncInterval, CoreSyncInterval).String()}, s.o.CoreArgs...)...)
	if err != nil {
		return err
	}
	if err := waitListening(ctx, p, webhook); err != nil {
		return err
	}
	// The RBAC manager grants each provider revision its system ClusterRole
	// and binds it to the ServiceAccount of the revision's Deployment. It
	// listens on no port: its binary is built without controller-runtime's
	// default metrics address (hack/crossplane-tools.sh), which is fixed.
	if _, err := s.start("crossplane-rbac", []string{"KUBECONFIG=" + s.MgmtKubeconfig, "POD_NAMESPACE=" + CrossplaneNamespace},
		filepath.Join(s.o.Tools, "crossplane-core"), "rbac", "start", "--poll-interval=10s"); err != nil {
		return err
	}
	if err := s.startPackageRuntime(ca); err != nil {
		return err
	}
	return s.apply(ctx, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: crossplane-no-usages
webhooks:
- name: nousages.protection.crossplane.io
  admissionReviewVersions: [v1]
  clientConfig:
    url: https://%s/validate-no-usages
    caBundle: %s
  failurePolicy: Fail
  sideEffects: None
  objectSelector:
    matchLabels:
      crossplane.io/in-use: "true"
  rules:
  - apiGroups: ["*"]
    apiVersions: ["*"]
    operations: [DELETE]
    resources: ["*"]
`, webhook, b64(ca.PEM)))
}

// publish serves the registry and publishes the packages of InstallVersion.
func (s *Stack) publish(ctx context.Context) error {
	if err := s.registry(ctx); err != nil {
		return err
	}
	return s.Publish(ctx, InstallVersion)
}

// StartProvider lets the package runtime run the provider (with
// ProviderLater) and waits until it does.
func (s *Stack) StartProvider(ctx context.Context) error { return s.pkgRuntime.allowProvider(ctx) }

// tenant starts the IAS simulator over TLS, as IAS is reached, and writes
// the IAS credentials, the CA bundle that verifies the tenant and the default
// ClusterProviderConfig.
func (s *Stack) tenant(ctx context.Context) error {
	password := fmt.Sprintf("local-%d", time.Now().UnixNano())
	o := s.o.Sim
	o.Username, o.Password = "admin", password
	sim, err := iassim.New(o).Serve("127.0.0.1:0", true)
	if err != nil {
		return err
	}
	s.Sim = sim
	if err := os.WriteFile(s.SimCAFile(), sim.CAPEM, 0o644); err != nil {
		return err
	}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eventing-auth-ias-creds", Namespace: KCPNamespace},
		StringData: map[string]string{"username": "admin", "password": password, "url": sim.URL}}
	ca := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SimCASecret, Namespace: KCPNamespace},
		Data: map[string][]byte{"ca.crt": sim.CAPEM}}
	for _, o := range []client.Object{creds, ca} {
		if err := s.Kube.Create(ctx, o); err != nil {
			return err
		}
	}
	// The platform's globalAccount is sent as every app's, as
	// eventing-auth-manager's --ias-global-account-id.
	return s.CreateTenantConfig(ctx, "default", creds.Name, PlatformGlobalAccount)
}

// CreateTenantConfig creates ClusterProviderConfig name for the IAS tenant:
// it logs on with the credentials Secret of KCPNamespace named credentials,
// verifies the tenant with SimCASecret and sends globalAccount (if any) with
// every app it creates.
func (s *Stack) CreateTenantConfig(ctx context.Context, name, credentials, globalAccount string) error {
	return s.Kube.Create(ctx, &apisv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1alpha1.ClusterProviderConfigSpec{
			Credentials: apisv1alpha1.ClusterCredentials{Source: xpv2.CredentialsSourceSecret,
				SecretRef: xpv2.SecretReference{Name: credentials, Namespace: KCPNamespace}},
			CABundleSecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Name: SimCASecret, Namespace: KCPNamespace}, Key: "ca.crt"},
			TenantSettings:    apisv1alpha1.TenantSettings{GlobalAccount: globalAccount},
		},
	})
}

// SimCASecret is the Secret in KCPNamespace whose ca.crt verifies the tenant.
const SimCASecret = "eventing-auth-ias-ca"

// SimCAFile is where the CA that verifies the tenant is written.
func (s *Stack) SimCAFile() string { return filepath.Join(s.Work, "ias-ca.crt") }

// SimClient is an HTTP client that verifies the tenant.
func (s *Stack) SimClient() *http.Client {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(s.Sim.CAPEM)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
}

// apply creates the objects of a YAML stream.
func (s *Stack) apply(ctx context.Context, stream string) error {
	for _, doc := range strings.Split(stream, "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return err
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := s.Kube.Create(ctx, u); err != nil {
			return fmt.Errorf("cannot create %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}
