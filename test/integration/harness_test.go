package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/kymaruntime"
	"github.com/kyma-project/provider-eventing-auth/internal/provider"
	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// The suite's shared control planes and provider.
var (
	// k8s is the management cluster, where the provider runs.
	k8s        client.Client
	mgmtConfig *rest.Config
	// rtEnv is the shared Kyma runtime, rt a client of it.
	rtEnv *envtest.Environment
	rt    client.Client
	// The running provider (startProvider): its metrics registry, read as a
	// scrape would, and its runtime client cache, small on purpose. A
	// restart replaces them.
	metrics *prometheus.Registry
	// informers is the running provider's informer cache.
	informers cache.Cache
	runtimes  *kymaruntime.Clients
	running   *providerProcess
	// watcher is its runtime-watcher listener, on a loopback port; it takes
	// only client certificates that watcherCA issued.
	watcher   *runtimewatcher.Listener
	watcherCA *testcerts.CA
	// watcherCAFile is watcherCA's PEM, --runtime-watcher-client-ca.
	watcherCAFile string
	// kubeconfigs remembers every kubeconfig handed to the provider, to search for leaks.
	kubeconfigs = &secretLedger{}
	logs        = &syncBuffer{}
	secrets     = &secretLedger{}
	// statuses records every IASApplication status the API server held.
	statuses = &syncBuffer{}
)

const (
	poll = 3 * time.Second
	// listSettle is how long the provider trusts IAS's lists to lag.
	listSettle = 6 * time.Second
	// secretCheck is how often an app's api secrets are listed at the least.
	secretCheck = 2 * poll
	timeout     = 60 * time.Second
	// rejectedBackoff: how long after a rejected password no other unproven
	// password of the user is tried, and until the rejected one is probed.
	rejectedBackoff = 45 * time.Second
	// unreachableDeletion is how long a deletion waits for a runtime that does not answer.
	unreachableDeletion = 10 * time.Second
	runtimeCacheSize    = 10
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// secretLedger remembers every simulator and password used, to search for leaks.
type secretLedger struct {
	mu        sync.Mutex
	sims      []*iassim.Running
	passwords []string
}

func (l *secretLedger) add(s *iassim.Running, passwords ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s != nil {
		l.sims = append(l.sims, s)
	}
	l.passwords = append(l.passwords, passwords...)
}

func (l *secretLedger) values() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]string(nil), l.passwords...)
	for _, s := range l.sims {
		for _, a := range s.Apps() {
			for _, sec := range a.Secrets {
				out = append(out, sec.Value)
			}
		}
	}
	return out
}

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run `make test`, which builds kube-apiserver and etcd first")
		os.Exit(1)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "package", "crds"), filepath.Join("..", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	// The runtime control plane starts alongside: two start about as fast as one.
	rtEnv = &envtest.Environment{}
	rtStarted := make(chan error, 1)
	go func() {
		cfg, err := rtEnv.Start()
		if err == nil {
			rt, err = client.New(cfg, client.Options{})
		}
		rtStarted <- err
	}()
	cfg, err := env.Start()
	if rtErr := <-rtStarted; err == nil {
		err = rtErr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot start envtest:", err)
		os.Exit(1)
	}
	mgmtConfig = cfg
	code := run(m, cfg)
	_ = env.Stop()
	_ = rtEnv.Stop()
	os.Exit(code)
}

func run(m *testing.M, cfg *ctrlConfig) int {
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.Level(zapcore.DebugLevel)))
	var err error
	if watcherCA, err = testcerts.NewCA("klm-watcher CA"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "provider-eventing-auth-integration")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir) //nolint:errcheck // A temporary folder.
	watcherCAFile = filepath.Join(dir, "watcher-client-ca.crt")
	if err := os.WriteFile(watcherCAFile, watcherCA.PEM, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p, err := startProvider(cfg, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer p.stop()
	return m.Run()
}

// providerProcess is the suite's provider: a manager with its controllers, as
// a process holds it; stop ends it and what it knew in memory.
type providerProcess struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (p *providerProcess) stop() {
	p.cancel()
	<-p.done
}

// restartProvider stops the suite's provider and starts a new one, which
// knows only what the API server holds, as after a crash.
func restartProvider(t *testing.T) {
	t.Helper()
	restartProviderWith(t, func(*provider.Settings) {})
}

// restartProviderWith restarts the provider with the suite's settings as
// change leaves them.
func restartProviderWith(t *testing.T, change func(*provider.Settings)) {
	t.Helper()
	running.stop()
	if _, err := startProviderWith(mgmtConfig, true, change); err != nil {
		t.Fatal(err)
	}
}

// settings are the suite's provider settings: the shipped defaults, with
// polls, waits and timeouts short enough for tests, more workers for the
// parallel scenarios, and the runtime-watcher listener on a loopback port.
func settings() provider.Settings {
	s := provider.DefaultSettings()
	s.Poll, s.PollJitter, s.PollRate = poll, 500*time.Millisecond, 200
	s.MaxReconcileRate = 20
	s.KubeQPS = 200
	s.MetricsAddr, s.ProbeAddr = "0", "0"
	s.StateMetricsInterval = time.Second
	s.IASTimeout, s.IASBaseBackoff, s.IASMaxBackoff = 2*time.Second, 100*time.Millisecond, time.Second
	s.IASListSettle, s.IASSecretCheck = listSettle, secretCheck
	// A password fixed after a rejection is tried within a test's timeout.
	s.IASRejectedBackoff = rejectedBackoff
	s.RuntimeTimeout = 5 * time.Second
	s.RuntimeUnreachableDeletion = unreachableDeletion
	s.RuntimeClientCacheSize = runtimeCacheSize
	s.WatcherAddr = "127.0.0.1:0"
	s.WatcherClientCA = watcherCAFile
	// The simulators and some runtimes of the scenarios answer plain http
	// on loopback.
	s.TestPlainHTTPLoopback = true
	// App name claims live beside the leader election Lease.
	s.LeaderElectionNamespace = "default"
	return s
}

// startProvider builds and starts the provider as main does (package
// provider), with a metrics registry, IAS pool, runtime clients and circuits
// of its own, and points the suite's globals at it. again: the process has
// run controllers of the same names.
func startProvider(cfg *ctrlConfig, again bool) (*providerProcess, error) {
	return startProviderWith(cfg, again, func(*provider.Settings) {})
}

func startProviderWith(cfg *ctrlConfig, again bool, change func(*provider.Settings)) (*providerProcess, error) {
	metrics = prometheus.NewRegistry()
	s := settings()
	change(&s)
	prov, err := provider.New(cfg, s, provider.Process{Metrics: metrics, Log: ctrl.Log, Again: again,
		SetupFailed: func(err error) { fmt.Fprintln(os.Stderr, err); os.Exit(1) }})
	if err != nil {
		return nil, err
	}
	mgr := prov.Manager
	runtimes, watcher, informers = prov.Runtimes, prov.Watcher, mgr.GetCache()
	ctx, cancel := context.WithCancel(context.Background())
	p := &providerProcess{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_ = mgr.Start(ctx)
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		p.stop()
		return nil, errors.New("cache did not sync")
	}
	k8s = mgr.GetClient()
	recordStatuses(ctx, mgr)
	running = p
	return p, nil
}

// recordStatuses keeps every status of every managed resource the cache sees.
func recordStatuses(ctx context.Context, mgr ctrl.Manager) {
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				l := &iasv1alpha1.IASApplicationList{}
				if mgr.GetClient().List(ctx, l) == nil {
					for _, a := range l.Items {
						b, _ := json.Marshal(a.Status)
						_, _ = statuses.Write(append(b, '\n'))
					}
				}
				rl := &runtimev1alpha1.RuntimeSecretList{}
				if mgr.GetClient().List(ctx, rl) == nil {
					for _, r := range rl.Items {
						b, _ := json.Marshal(r.Status)
						_, _ = statuses.Write(append(b, '\n'))
					}
				}
			}
		}
	}()
}

// tenant is one test's IAS simulator with a ProviderConfig in the test namespace.
type tenant struct {
	sim       *iassim.Running
	ns        string
	pcName    string
	secret    string
	username  string
	password  string
	tokenURL  string
	wellKnown int
}

// newNamespace creates a namespace for one test.
func newNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	NewWithT(t).Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// newTenant starts a simulator and a ProviderConfig "ias" for it in namespace ns.
func newTenant(t testing.TB, ns string, opts iassim.Options) *tenant {
	t.Helper()
	g := NewWithT(t)
	if opts.Password == "" {
		opts.Password = "pw-" + ns + "-s3cr3t-value"
	}
	if opts.Username == "" {
		// A user of its own: failed logons are counted per tenant URL and
		// user, and a closed simulator's port may serve another test next.
		opts.Username = "admin-" + ns
	}
	sim, err := iassim.New(opts).Serve("127.0.0.1:0", false)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = sim.Close() })
	secrets.add(sim, opts.Password)
	tn := &tenant{sim: sim, ns: ns, pcName: "ias", secret: "ias-creds", username: opts.Username, password: opts.Password, tokenURL: sim.URL + "/oauth2/token"}
	tn.writeCreds(t, map[string]string{"username": tn.username, "password": opts.Password, "url": sim.URL})
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: tn.pcName, Namespace: ns},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.LocalCredentials{
			Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.LocalSecretReference{Name: tn.secret}}},
	}
	g.Expect(k8s.Create(context.Background(), pc)).To(Succeed())
	return tn
}

func (tn *tenant) writeCreds(t testing.TB, data map[string]string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: tn.secret, Namespace: tn.ns}}
	_, err := ctrl.CreateOrUpdate(context.Background(), k8s, s, func() error {
		s.StringData = data
		s.Data = nil
		return nil
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
}

// app is an IASApplication using the tenant's ProviderConfig, publishing to
// connection Secret "<name>-creds".
func (tn *tenant) app(name string) *iasv1alpha1.IASApplication {
	return &iasv1alpha1.IASApplication{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tn.ns},
		Spec: iasv1alpha1.IASApplicationSpec{ManagedResourceSpec: xpv2.ManagedResourceSpec{
			ProviderConfigReference:          &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: tn.pcName},
			WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: name + "-creds"},
		}},
	}
}

func get(g Gomega, o client.Object) client.Object {
	g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o)).To(Succeed())
	return o
}

// managedObject is a managed resource of either kind.
type managedObject interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

// condition returns the status and message of a condition of a managed resource.
func condition(g Gomega, a managedObject, ct xpv2.ConditionType) (corev1.ConditionStatus, string) {
	get(g, a)
	c := a.GetCondition(ct)
	return c.Status, c.Message
}

// waitReady waits until the resource is Ready and Synced.
func waitReady(t testing.TB, a managedObject) {
	t.Helper()
	g := NewWithT(t)
	// Gomega fails with t.Fatalf: the lines are told on the way out.
	defer tellLogLinesOnFailure(t, a)
	g.Eventually(func(g Gomega) {
		get(g, a)
		g.Expect(a.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue), "Ready: %s; Synced: %s",
			a.GetCondition(xpv2.TypeReady).Message, a.GetCondition(xpv2.TypeSynced).Message)
		g.Expect(a.GetCondition(xpv2.TypeSynced).Status).To(Equal(corev1.ConditionTrue), "Synced: %s", a.GetCondition(xpv2.TypeSynced).Message)
	}, timeout, 200*time.Millisecond).Should(Succeed())
}

// connection returns the resource's connection Secret data.
func connection(g Gomega, a *iasv1alpha1.IASApplication) map[string][]byte {
	s := &corev1.Secret{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: a.Namespace, Name: a.Name + "-creds"}, s)).To(Succeed())
	return s.Data
}

// expectPublished checks the connection Secret holds the app's client ID, a secret
// value that IAS knows for the app, and the tenant's endpoints.
func expectPublished(g Gomega, tn *tenant, a *iasv1alpha1.IASApplication) iassim.App {
	get(g, a)
	app, ok := tn.sim.App(meta.GetExternalName(a))
	g.Expect(ok).To(BeTrue(), "external name %q is no app in IAS", meta.GetExternalName(a))
	d := connection(g, a)
	g.Expect(string(d["client_id"])).To(Equal(app.ClientID))
	g.Expect(string(d["token_url"])).To(Equal(tn.sim.URL + "/oauth2/token"))
	g.Expect(string(d["certs_url"])).To(Equal(tn.sim.URL + "/oauth2/certs"))
	values := []string{}
	for _, s := range app.Secrets {
		values = append(values, s.Value)
	}
	g.Expect(values).To(ContainElement(string(d["client_secret"])))
	return app
}

type ctrlConfig = rest.Config
