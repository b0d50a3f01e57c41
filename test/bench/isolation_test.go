package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/kymaruntime"
	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/testnet"
)

// workers is the provider's default --max-reconcile-rate: workers per controller.
const workers = 10

// BenchmarkIsolation takes the figures of broken neighbours: first new
// runtimes with no neighbour (the baseline); then healthy work beside a hung
// IAS tenant with 20 apps and 100 runtimes that hang (50) or refuse (50); then
// 1,000 unreachable runtimes with apps, and a restart (SIGKILL) beside all of
// them; then a new runtime beside 1,000 more unreachable ones and 1,000
// healthy ones, which then become unreachable at once; then 1,000 resources
// of a ProviderConfig with a wrong password.
func BenchmarkIsolation(b *testing.B) {
	args := []string{"--poll=" + benchPoll.String()}
	startProvider(b, args...)
	waitServing(b)
	for range b.N {
		ctx := context.Background()
		baseline := baselineNewRuntimes(ctx, b)
		brokenNeighbours(ctx, b)
		restartBeside1000Unreachable(ctx, b, baseline, args)
		outage := beside1000Unreachable(ctx, b)
		outage.happens(ctx, b, baseline)
		wrongCredentials(ctx, b)
	}
}

// baselineNewRuntimes is the p50 of 20 new runtimes, one every 2s, with no
// broken neighbour: what the figures beside them are held against.
func baselineNewRuntimes(ctx context.Context, b *testing.B) time.Duration {
	took := newRuntimesEvery(ctx, b, "baseline", 20, 2*time.Second, time.Minute)
	p50 := benchfig.Percentile(took, 0.5)
	fmt.Printf("BENCH isolation_baseline_new_runtime_p50_s %.3f\n", p50.Seconds())
	fmt.Printf("BENCH isolation_baseline_new_runtime_p99_s %.3f\n", benchfig.Percentile(took, 0.99).Seconds())
	return p50
}

// hungTenant answers no request: it accepts them and holds them until the
// client gives up. It counts the requests it got.
type hungTenant struct {
	url   string
	calls atomic.Int64
}

func newHungTenant(b *testing.B) *hungTenant {
	h := &hungTenant{}
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { _ = srv.Close() })
	h.url = "http://" + l.Addr().String()
	return h
}

// clusterProviderConfig makes a ClusterProviderConfig of its own credentials.
func clusterProviderConfig(ctx context.Context, b *testing.B, name, url, password string) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ias-" + name, Namespace: ns},
		StringData: map[string]string{"username": "admin", "password": password, "url": url}}
	pc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ClusterProviderConfigSpec{
		Credentials: v1alpha1.ClusterCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.SecretReference{Name: secret.Name, Namespace: ns}}}}
	if err := mgmt.Create(ctx, secret); err != nil {
		b.Fatal(err)
	}
	if err := mgmt.Create(ctx, pc); err != nil {
		b.Fatal(err)
	}
}

// appOn makes an IASApplication of the named ClusterProviderConfig.
func appOn(ctx context.Context, b *testing.B, id, pc string) {
	a := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns}}
	a.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: id + "-ias"})
	a.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: pc})
	if err := mgmt.Create(ctx, a); err != nil {
		b.Fatal(err)
	}
}

// brokenRuntime makes a runtime whose kubeconfig points at server. With an app
// it has its own IASApplication on the healthy tenant; without, it publishes
// the shared local Secret "shared-creds".
func brokenRuntime(ctx context.Context, b *testing.B, id, server string, withApp bool) {
	kc, err := kubeconfigNamed(id, server)
	if err != nil {
		b.Fatal(err)
	}
	if err := mgmt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + id, Namespace: ns}, Data: map[string][]byte{"config": kc}}); err != nil {
		b.Fatal(err)
	}
	p := runtimev1alpha1.RuntimeSecretParameters{RuntimeID: id, Target: runtimev1alpha1.TargetSecret{Namespace: id, Name: "eventing-webhook-auth"}}
	if withApp {
		appOn(ctx, b, id, "default")
		p.ApplicationRef = &xpv2.NamespacedReference{Name: id}
	} else {
		p.CredentialsSecretRef = &xpv2.LocalSecretReference{Name: "shared-creds"}
	}
	if err := mgmt.Create(ctx, &runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns},
		Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: p}}); err != nil {
		b.Fatal(err)
	}
}

// conditioned is a managed resource of either kind.
type conditioned interface {
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

// namesCause tells whether a resource is Synced=False with a message naming
// the cause of its failing target.
func namesCause(o conditioned) bool {
	c := o.GetCondition(xpv2.TypeSynced)
	return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "next try at") &&
		(strings.Contains(c.Message, "timeout") || strings.Contains(c.Message, "refused"))
}

// runtimeNamesCause tells whether runtime id's RuntimeSecret names the cause
// of its failing runtime.
func runtimeNamesCause(ctx context.Context, id string) bool {
	return runtimeNamesCauseIn(mgmt)(ctx, id)
}

// runtimeNamesCauseIn is runtimeNamesCause, reading the RuntimeSecrets from r.
func runtimeNamesCauseIn(r client.Reader) func(context.Context, string) bool {
	return func(ctx context.Context, id string) bool {
		rs := &runtimev1alpha1.RuntimeSecret{}
		return r.Get(ctx, key2(id), rs) == nil && namesCause(rs)
	}
}

// watchedRuntimeSecrets is a cache of the RuntimeSecrets in ns, kept by one
// watch until stop is called. Waiting on a thousand of them while a figure is
// taken reads it: read from the API server, a thousand Gets a round would
// share the two cores with what the figure measures.
func watchedRuntimeSecrets(ctx context.Context, b *testing.B) (r client.Reader, stop func()) {
	ctx, stop = context.WithCancel(ctx)
	cfg, err := clientcmd.BuildConfigFromFlags("", stack.MgmtKubeconfig())
	if err != nil {
		b.Fatal(err)
	}
	c, err := crcache.New(cfg, crcache.Options{Scheme: mgmt.Scheme(), DefaultNamespaces: map[string]crcache.Config{ns: {}}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.GetInformer(ctx, &runtimev1alpha1.RuntimeSecret{}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the RuntimeSecrets' cache did not sync")
	}
	return c, stop
}

// sampler keeps the highest value of a gauge, per kind of target.
type sampler struct {
	mu   sync.Mutex
	most map[string]float64
	stop chan struct{}
	done chan struct{}
}

// sampleFailingCalls samples the workers held by calls to failing targets and
// by first contacts and probes past their grace.
func sampleFailingCalls(b *testing.B) *sampler {
	return sampleGauge(b, "eventing_auth_calls_to_failing_targets_in_flight")
}

func sampleGauge(b *testing.B, name string) *sampler {
	s := &sampler{most: map[string]float64{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			for _, m := range scrape(b)[name].GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "kind" {
						s.mu.Lock()
						s.most[l.GetValue()] = max(s.most[l.GetValue()], m.GetGauge().GetValue())
						s.mu.Unlock()
					}
				}
			}
		}
	}()
	return s
}

func (s *sampler) end() map[string]float64 {
	close(s.stop)
	<-s.done
	return s.most
}

// brokenNeighbours: the two cases at once, then healthy work beside them.
func brokenNeighbours(ctx context.Context, b *testing.B) {
	hung := newHungTenant(b)
	clusterProviderConfig(ctx, b, "hung", hung.url, "any-password")
	hangAt, refuseAt := testnet.Hang(b).Addr, testnet.RefusingAddr(b)
	// Healthy runtimes to delete later, Ready before the neighbours break.
	var doomed []string
	for range 10 {
		doomed = append(doomed, nextID("doomed"))
	}
	create(ctx, b, doomed)
	waitAll(ctx, b, doomed, 2*time.Minute, hasSecret)

	start := time.Now()
	var hungApps, brokenRS []string
	for range 20 {
		id := nextID("hung-app")
		appOn(ctx, b, id, "hung")
		hungApps = append(hungApps, id)
	}
	for i := range 100 {
		id := nextID("broken-rt")
		addr := hangAt
		if i%2 == 1 {
			addr = refuseAt
		}
		brokenRuntime(ctx, b, id, addr, true)
		brokenRS = append(brokenRS, id)
	}
	named := waitAll(ctx, b, hungApps, 3*time.Minute, func(ctx context.Context, id string) bool {
		a := &iasv1alpha1.IASApplication{}
		return mgmt.Get(ctx, key2(id), a) == nil && namesCause(a)
	})
	for id, at := range waitAll(ctx, b, brokenRS, 3*time.Minute, runtimeNamesCause) {
		named[id] = at
	}
	var slowest time.Duration
	for _, at := range named {
		slowest = max(slowest, at.Sub(start))
	}
	benchfig.Figure("isolation_cause_named_max_s", slowest.Seconds(), 30)

	// Healthy work beside them: 20 new runtimes, one every 2s, and 10 deletions.
	calls0, window := hung.calls.Load(), time.Now()
	samples := sampleFailingCalls(b)
	var wg sync.WaitGroup
	delStart := time.Now()
	for _, id := range doomed {
		if err := deleteRuntime(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	wg.Go(func() {
		var slowest time.Duration
		for _, at := range waitAll(ctx, b, doomed, 3*time.Minute, func(_ context.Context, id string) bool { return len(sim.AppsNamed(id)) == 0 }) {
			slowest = max(slowest, at.Sub(delStart))
		}
		benchfig.Figure("isolation_healthy_delete_app_gone_max_s", slowest.Seconds(), 10)
	})
	took := newRuntimesEvery(ctx, b, "healthy", 20, 2*time.Second, 3*time.Minute)
	wg.Wait()
	most := samples.end()
	minutes := time.Since(window).Minutes()
	benchfig.Figure("isolation_new_runtime_p99_s", benchfig.Percentile(took, 0.99).Seconds(), 5)
	benchfig.Figure("isolation_new_runtime_max_s", benchfig.Percentile(took, 1).Seconds(), 10)
	fmt.Printf("BENCH isolation_new_runtime_p50_s %.3f\n", benchfig.Percentile(took, 0.5).Seconds())
	benchfig.Figure("isolation_hung_tenant_calls_per_min", float64(hung.calls.Load()-calls0)/minutes, 6)
	// The bound is the bulkhead's: 2 of a controller's 10 workers.
	benchfig.Figure("isolation_worker_share_failing_tenant", most["tenant"]/workers, 0.2)
	benchfig.Figure("isolation_worker_share_failing_runtimes", most["runtime"]/workers, 0.2)
}

// beside1000Unreachable: 1,000 healthy runtimes Ready and polling, 1,000
// unreachable ones (100 hang, 900 refuse: hibernated and deprovisioned
// runtimes refuse or fail fast, partitions hang), and new runtimes one a
// second. The healthy ones reach their API server through two proxies, so
// that they can become unreachable at once (an outage).
func beside1000Unreachable(ctx context.Context, b *testing.B) *outage {
	if err := mgmt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "shared-creds", Namespace: ns},
		StringData: map[string]string{"client_id": "id", "client_secret": "unreachable-only", "token_url": "https://t", "certs_url": "https://c"}}); err != nil {
		b.Fatal(err)
	}
	server := apiServer(b, runtimeKC)
	o := &outage{hang: testnet.NewProxy(b, server), refuse: testnet.NewProxy(b, server)}
	o.ids = make([]string, 1000)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for i := range o.ids {
		id := nextID("beside")
		o.ids[i] = id
		via := o.refuse.Addr
		if i%2 == 0 {
			via = o.hang.Addr
		}
		g.Go(func() error { return newRuntimeVia(gctx, id, via) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	waitAll(ctx, b, o.ids, 10*time.Minute, hasSecret)

	hangAt, refuseAt := testnet.Hang(b).Addr, testnet.RefusingAddr(b)
	var unreachable []string
	for i := range 1000 {
		id := nextID("unreachable")
		addr := refuseAt
		if i%10 == 0 {
			addr = hangAt
		}
		brokenRuntime(ctx, b, id, addr, false)
		unreachable = append(unreachable, id)
	}
	watched, stopWatch := watchedRuntimeSecrets(ctx, b)
	defer stopWatch()
	waitAll(ctx, b, unreachable, 5*time.Minute, runtimeNamesCauseIn(watched))

	took := newRuntimesEvery(ctx, b, "new-beside", 30, time.Second, 3*time.Minute)
	benchfig.Figure("isolation_new_runtime_p99_s_beside_1000_unreachable", benchfig.Percentile(took, 0.99).Seconds(), 5)
	fmt.Printf("BENCH isolation_new_runtime_p50_s_beside_1000_unreachable %.3f\n", benchfig.Percentile(took, 0.5).Seconds())
	return o
}

// apiServer is the host:port of the API server a kubeconfig names, as
// client-go's metrics name it (and a proxy in front of it takes).
func apiServer(b *testing.B, kubeconfig []byte) string {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		return strings.TrimPrefix(c.Server, "https://")
	}
	b.Fatal("the kubeconfig has no cluster")
	return ""
}

// outage is 1,000 Ready runtimes behind two proxies: half of them will hang,
// half refuse.
type outage struct {
	ids          []string
	hang, refuse *testnet.Proxy
}

// happens takes the runtimes' network away at once while the provider runs:
// their circuits are closed and their health known from their last poll. New
// healthy runtimes meanwhile get their Secret as fast as with no neighbour,
// no more than 2 workers wait on them (their polls are first contacts), and
// each of the 1,000 names its cause at its next poll.
func (o *outage) happens(ctx context.Context, b *testing.B, baseline time.Duration) {
	workers := sampleFailingCalls(b)
	watched, stopWatch := watchedRuntimeSecrets(ctx, b)
	defer stopWatch()
	before := apiWrites(ctx, b)
	start := time.Now()
	o.hang.Hang()
	o.refuse.Refuse()
	var (
		slowest time.Duration
		named   sync.WaitGroup
	)
	named.Go(func() {
		for _, at := range waitAll(ctx, b, o.ids, 5*time.Minute, runtimeNamesCauseIn(watched)) {
			slowest = max(slowest, at.Sub(start))
		}
	})
	took := newRuntimesEvery(ctx, b, "new-in-outage", 20, 2*time.Second, time.Minute)
	named.Wait()
	most := workers.end()
	printWritesPerSecond("isolation_outage_api_writes_per_s", before, apiWrites(ctx, b), time.Since(start).Seconds())
	newRuntimeFigures("outage", took, baseline)
	// Each names its cause at its next poll (the poll and its 10% spread) and
	// within 30s of it.
	benchfig.Figure("isolation_outage_cause_named_max_s", slowest.Seconds(), (benchPoll + benchPoll/10 + 30*time.Second).Seconds())
	benchfig.Figure("isolation_outage_runtime_workers_held_max", most["runtime"], 2)
}

// newRuntimeFigures prints the figures of new healthy runtimes beside broken
// neighbours against the baseline with none.
func newRuntimeFigures(moment string, took []time.Duration, baseline time.Duration) {
	benchfig.Figure("isolation_"+moment+"_new_runtime_p50_s", benchfig.Percentile(took, 0.5).Seconds(), 1.5*baseline.Seconds())
	benchfig.Figure("isolation_"+moment+"_new_runtime_p99_s", benchfig.Percentile(took, 0.99).Seconds(), 2)
}

// restartBeside1000Unreachable: 1,000 unreachable runtimes, each with
// its own app (500 whose API server accepts and never answers, 500
// refusing), created at once; each names its cause soon after its app is
// Ready. Then a SIGKILL and a restart beside them (and everything broken
// before): what the provider learned of them survives in their conditions, so
// new healthy runtimes get their Secret as fast as with no neighbour and no
// more than 2 workers wait on first contacts.
func restartBeside1000Unreachable(ctx context.Context, b *testing.B, baseline time.Duration, args []string) {
	hanging := testnet.Hang(b)
	refuseAt := testnet.RefusingAddr(b)
	workers := sampleFailingCalls(b)
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = nextID("dead")
	}
	// Watched from before they exist: each is seen naming its cause when it
	// does, not when the last one was made.
	var (
		named   map[string]time.Time
		watched sync.WaitGroup
	)
	cached, stopWatch := watchedRuntimeSecrets(ctx, b)
	defer stopWatch()
	watched.Go(func() { named = waitAll(ctx, b, ids, 10*time.Minute, runtimeNamesCauseIn(cached)) })
	for i, id := range ids {
		addr := refuseAt
		if i%2 == 0 {
			addr = hanging.Addr
		}
		brokenRuntime(ctx, b, id, addr, true)
	}
	watched.Wait()
	stopWatch() // the restart below is measured without the bench's watch beside it
	var afterReady []time.Duration
	for _, id := range ids {
		a := &iasv1alpha1.IASApplication{}
		if err := mgmt.Get(ctx, key2(id), a); err != nil {
			b.Fatal(err)
		}
		ready := a.GetCondition(xpv2.TypeReady)
		if ready.Status != corev1.ConditionTrue {
			b.Fatalf("IASApplication %s is not Ready: %s", id, ready.Message)
		}
		afterReady = append(afterReady, named[id].Sub(ready.LastTransitionTime.Time))
	}
	// The Ready time has whole seconds: a second is added.
	benchfig.Figure("isolation_unreachable_cause_named_after_app_ready_max_s", benchfig.Percentile(afterReady, 1).Seconds()+1, 30)
	fmt.Printf("BENCH isolation_unreachable_cause_named_after_app_ready_p50_s %.3f\n", benchfig.Percentile(afterReady, 0.5).Seconds()+1)
	benchfig.Figure("isolation_new_unreachable_runtime_workers_held_max", workers.end()["runtime"], 2)

	before := apiWrites(ctx, b)
	killed := time.Now()
	restartProvider(b, "provider-restarted", args...)
	// A start's own cost, whatever the neighbours: the figures below are
	// taken from the moment it serves.
	waitServing(b)
	fmt.Printf("BENCH isolation_restart_serving_s %.3f\n", time.Since(killed).Seconds())
	workers = sampleFailingCalls(b)
	accepted, window := hanging.Accepted(), time.Now()
	took := newRuntimesEvery(ctx, b, "new-after-restart", 20, 2*time.Second, time.Minute)
	minutes := time.Since(window).Minutes()
	// The restarted provider's counters start at its start.
	mgmtKC, err := os.ReadFile(stack.MgmtKubeconfig())
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("BENCH isolation_restart_provider_api_writes_per_s %.1f\n", scrape(b).writesTo(apiServer(b, mgmtKC))/time.Since(window).Seconds())
	printWritesPerSecond("isolation_restart_api_writes_per_s", before, apiWrites(ctx, b), time.Since(window).Seconds())
	fmt.Printf("restart: new runtimes took %v (in the order they got their Secret)\n", took)
	newRuntimeFigures("restart", took, baseline)
	benchfig.Figure("isolation_restart_runtime_workers_held_max", workers.end()["runtime"], 2)
	fmt.Printf("BENCH isolation_restart_hanging_connections_per_min %.1f\n", float64(hanging.Accepted()-accepted)/minutes)
	// A runtime that accepts and never answers pins no socket: each
	// connection goes within the connect timeout (the shipped default).
	benchfig.Figure("isolation_hanging_connection_held_max_s", hanging.Longest().Seconds(), (kymaruntime.DefaultConnectTimeout + time.Second).Seconds())
	// What they named survived the restart.
	lost := 0
	for _, id := range ids {
		if !runtimeNamesCause(ctx, id) {
			lost++
		}
	}
	benchfig.Figure("isolation_restart_unreachable_not_naming_cause", float64(lost), 0)
}

// wrongCredentials: 1,000 IASApplications of a ProviderConfig whose password
// IAS rejects make one failed logon, not one per resource and retry.
func wrongCredentials(ctx context.Context, b *testing.B) {
	tenant, err := iassim.New(iassim.Options{Password: "the-right-password", Latency: iasLatency}).Serve("127.0.0.1:0", false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tenant.Close() })
	clusterProviderConfig(ctx, b, "wrong-password", tenant.URL, "a-wrong-password")
	var ids []string
	for range 1000 {
		id := nextID("rejected")
		appOn(ctx, b, id, "wrong-password")
		ids = append(ids, id)
	}
	start := time.Now()
	waitAll(ctx, b, ids, 5*time.Minute, func(ctx context.Context, id string) bool {
		a := &iasv1alpha1.IASApplication{}
		return mgmt.Get(ctx, key2(id), a) == nil && strings.Contains(a.GetCondition(xpv2.TypeSynced).Message, "rejected the credentials")
	})
	fmt.Printf("BENCH isolation_rejected_all_say_so_s %.3f\n", time.Since(start).Seconds())
	// Within one backoff step (10m by default) of the first failed logon.
	time.Sleep(time.Minute)
	failed := tenant.Stats()
	n := 0
	for op := range failed {
		n += failed[op][401]
	}
	benchfig.Figure("isolation_failed_logons_per_backoff_step_1000_resources", float64(n), 1)
}
