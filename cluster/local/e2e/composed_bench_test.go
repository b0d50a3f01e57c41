//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/waitall"
)

// tenantQPS is the ProviderConfig's default rateLimit.qps: the IAS bound.
const tenantQPS = 40.0

// composed is the stack the composed figures are taken on: what `make e2e`
// installs, with the IAS simulator answering as IAS does (50 rps per client,
// 100 ms), and many runtimes behind the namespace-mapping runtime proxy.
type composed struct {
	b     *testing.B
	s     *localstack.Stack
	proxy *runtimeProxy
	seq   int
	// runtimes counts the Ready runtimes on the stack, composed and direct.
	runtimes int
	// secrets watches the runtime Secrets, watches the management objects of
	// each runtime.
	secrets *secretWatch
	watches struct{ xrs, iasApplications, runtimeSecrets *objectWatch }
	// mgmt and rt are clients of the two API servers without client-side
	// throttling: the figures are the provider's and core's, not the bench's.
	mgmt, rt client.Client
}

// unthrottled is a client of the API server the kubeconfig names.
func unthrottled(b *testing.B, kubeconfig string, scheme *runtime.Scheme) client.Client {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// gcQPS is the API rate the bench gives kube-controller-manager (its default
// is 20/s). The garbage collector deletes each EventingAuth and then what is
// composed for it and what that owns, reading each object and its owner
// first: at 20/s, 200 deleted Kyma CRs take it minutes whatever the provider
// does. A landscape that deletes many runtimes at once sets this
// (docs/operations.md).
const gcQPS = 300

// BenchmarkComposed takes the figures users see: Kyma CR to runtime Secret
// through the kyma bridge, Crossplane core and the composition function, at
// 200, 1,000 and 3,000 runtimes, the first two next to the same number of
// runtimes made as managed resources directly in the same run (which stay, so
// the 3,000 are beside 1,200); at the largest size a new Kyma CR among them;
// the deletion of each size's Kyma CRs at once; and what the provider and
// Crossplane core use.
func BenchmarkComposed(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	// Core polls at its default of 1m and resyncs as the stack has it
	// (docs/operations.md); the provider polls at 1m, as in `make bench`.
	c := newComposed(b, ctx, localstack.Options{ProviderArgs: append([]string{"--poll=1m"}, strings.Fields(os.Getenv("BENCH_PROVIDER_ARGS"))...),
		CorePollInterval: time.Minute, CoreArgs: strings.Fields(os.Getenv("BENCH_CORE_ARGS"))})
	sizes := benchSizes(b, "BENCH_COMPOSED_RUNTIMES", []int{200, 1000, 3000})
	for range b.N {
		for i, n := range sizes {
			if i < len(sizes)-1 {
				c.deleteAll(ctx, c.bringUp(ctx, n, n <= 1000))
				continue
			}
			start := c.usage()
			ids := c.bringUp(ctx, n, n <= 1000)
			// Core works off what the bring-up queued before the new ones
			// come, as in a landscape at rest.
			c.waitXRsReady(ctx, n)
			c.settle(ctx, fmt.Sprintf("kyma_bringup_%d", n))
			c.newWhileReady(ctx, 10)
			c.deleteAll(ctx, ids)
			c.printUsage(start, n)
		}
	}
}

// newComposed starts the stack with o, the garbage collector at gcQPS, the
// audit log on and IAS answering in 100 ms, and waits until the packages are
// installed.
func newComposed(b *testing.B, ctx context.Context, o localstack.Options) *composed {
	o.GarbageCollectorQPS, o.AuditLog = gcQPS, true
	o.Sim = iassim.Options{Latency: 100 * time.Millisecond}
	s := startStack(b, ctx, o)
	NewWithT(b).Eventually(func(g Gomega) { expectInstalled(g, ctx, s, localstack.InstallVersion) }, 3*time.Minute, time.Second).Should(Succeed())
	proxy, err := newRuntimeProxy(s.RuntimeKubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(proxy.Close)
	secrets, err := watchRuntimeSecrets(ctx, s.RuntimeKubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	c := &composed{b: b, s: s, proxy: proxy, secrets: secrets,
		mgmt: unthrottled(b, s.MgmtKubeconfig, s.Kube.Scheme()), rt: unthrottled(b, s.RuntimeKubeconfig, s.RuntimeKube.Scheme())}
	c.watchManaged(ctx)
	return c
}

// watchManaged starts the watches of EventingAuths, IASApplications and
// RuntimeSecrets in the Kyma CRs' namespace.
func (c *composed) watchManaged(ctx context.Context) {
	for _, w := range []struct {
		to  **objectWatch
		gvr schema.GroupVersionResource
	}{
		{&c.watches.xrs, eventingauth.Kind.GroupVersion().WithResource("eventingauths")},
		{&c.watches.iasApplications, iasv1alpha1.SchemeGroupVersion.WithResource("iasapplications")},
		{&c.watches.runtimeSecrets, runtimev1alpha1.SchemeGroupVersion.WithResource("runtimesecrets")},
	} {
		var err error
		if *w.to, err = watchObjects(ctx, c.s.MgmtKubeconfig, w.gvr, localstack.KCPNamespace); err != nil {
			c.b.Fatal(err)
		}
	}
}

// benchSizes reads a comma-separated list of runtime counts from env, for a
// quicker look at one size (BENCH_COMPOSED_RUNTIMES=200).
func benchSizes(b *testing.B, env string, def []int) []int {
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	var sizes []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: want runtime counts separated by commas", env, v)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

func (c *composed) nextID(prefix string) string {
	c.seq++
	return fmt.Sprintf("%s-%05d", prefix, c.seq)
}

// runtime makes runtime id: its kyma-system namespace and kubeconfig Secret.
func (c *composed) runtime(ctx context.Context, id string) error {
	if err := c.rt.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: id}}); err != nil {
		return err
	}
	return c.mgmt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + id, Namespace: localstack.KCPNamespace},
		Data: map[string][]byte{"config": c.proxy.kubeconfig(id)}})
}

// kyma creates runtime id's Kyma CR, as the lifecycle manager would.
func (c *composed) kyma(ctx context.Context, id string) error {
	k := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"channel": "regular"}}}
	k.SetGroupVersionKind(eventingauth.KymaKind)
	k.SetNamespace(localstack.KCPNamespace)
	k.SetName(id)
	k.SetLabels(map[string]string{eventingauth.LabelGlobalAccount: "ga-bench"})
	return c.mgmt.Create(ctx, k)
}

// direct makes runtime id's managed resources as `make bench` does, without
// the bridge, the XR or core.
func (c *composed) direct(ctx context.Context, id string) error {
	app := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: localstack.KCPNamespace}}
	app.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: id + "-ias"})
	if err := c.mgmt.Create(ctx, app); err != nil {
		return err
	}
	return c.mgmt.Create(ctx, &runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: localstack.KCPNamespace},
		Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: runtimev1alpha1.RuntimeSecretParameters{
			RuntimeID: id, ApplicationRef: &xpv2.NamespacedReference{Name: id}}}})
}

// runtimeHoldsSecret asks runtime id's API server whether it holds its Secret.
func (c *composed) runtimeHoldsSecret(ctx context.Context, id string) bool {
	err := c.rt.Get(ctx, client.ObjectKey{Namespace: id, Name: "eventing-webhook-auth"}, &corev1.Secret{})
	return err == nil
}

// hasSecret tells whether runtime id has its Secret, as the watch saw it.
func (c *composed) hasSecret(_ context.Context, id string) bool {
	return c.secrets.holds(id)
}

// waitAll waits until done holds for every id, and returns when each first did.
func (c *composed) waitAll(ctx context.Context, ids []string, limit time.Duration, done func(context.Context, string) bool) map[string]time.Time {
	at, missing := waitall.Until(ctx, ids, limit, waitall.Every(100*time.Millisecond), done)
	if missing > 0 {
		c.b.Fatalf("%d of %d not done after %s; provider log:\n%s", missing, len(ids), limit, c.s.Provider().Tail())
	}
	return at
}

func (c *composed) each(ctx context.Context, ids []string, fn func(context.Context, string) error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for _, id := range ids {
		g.Go(func() error { return fn(gctx, id) })
	}
	if err := g.Wait(); err != nil {
		c.b.Fatal(err)
	}
}

func (c *composed) iasCalls() int {
	n := 0
	for _, codes := range c.s.Sim.Stats() {
		for _, k := range codes {
			n += k
		}
	}
	return n
}

// printIASCallsPerRuntime prints the IAS calls per runtime by operation and
// answer since before, to tell which calls a figure's bound counts.
func (c *composed) printIASCallsPerRuntime(prefix string, before iassim.Stats, runtimes int) {
	since := c.s.Sim.Stats().Since(before)
	for _, op := range slices.Sorted(maps.Keys(since)) {
		for _, code := range slices.Sorted(maps.Keys(since[op])) {
			fmt.Printf("BENCH %s_ias_calls_per_runtime{%s,%d} %.2f\n", prefix, op, code, float64(since[op][code])/float64(runtimes))
		}
	}
}

// timed makes n runtimes at once with create, waits for their Secrets, and
// returns the time to the last, the time per runtime and the IAS calls made.
func (c *composed) timed(ctx context.Context, prefix string, n int, create func(context.Context, string) error) (time.Duration, []time.Duration, int, []string) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = c.nextID(prefix)
	}
	c.each(ctx, ids, c.runtime)
	writes0, err := apiWrites(ctx, c.s.MgmtKubeconfig)
	if err != nil {
		c.b.Fatal(err)
	}
	stats0 := c.s.Sim.Stats()
	calls0, start := c.iasCalls(), time.Now()
	c.each(ctx, ids, create)
	at := c.waitAll(ctx, ids, 20*time.Minute, c.hasSecret)
	writes, err := apiWrites(ctx, c.s.MgmtKubeconfig)
	if err != nil {
		c.b.Fatal(err)
	}
	printWritesPerRuntime(fmt.Sprintf("%s%d", prefix, n), writes0, writes, n)
	c.printIASCallsPerRuntime(fmt.Sprintf("%s%d", prefix, n), stats0, n)
	var took []time.Duration
	var last time.Duration
	for _, t := range at {
		took = append(took, t.Sub(start))
		last = max(last, t.Sub(start))
	}
	return last, took, c.iasCalls() - calls0, ids
}

// bringUp: n Kyma CRs at once, then, if direct, n runtimes made directly, in
// the same run. It returns the Kyma CRs' runtime IDs.
func (c *composed) bringUp(ctx context.Context, n int, direct bool) []string {
	kyma := func(ctx context.Context, id string) error { return c.kyma(ctx, id) }
	last, took, calls, ids := c.timed(ctx, "kyma", n, kyma)
	c.runtimes += n
	bound := 1.3 * float64(calls) / tenantQPS
	benchfig.Figure(fmt.Sprintf("kyma_to_secret_%d_s", n), last.Seconds(), bound)
	fmt.Printf("BENCH kyma_to_secret_%d_p50_s %.3f\n", n, benchfig.Percentile(took, 0.5).Seconds())
	fmt.Printf("BENCH kyma_to_secret_%d_p99_s %.3f\n", n, benchfig.Percentile(took, 0.99).Seconds())
	fmt.Printf("BENCH kyma_ias_calls_per_runtime_%d %.2f\n", n, float64(calls)/float64(n))
	if !direct {
		return ids
	}
	directLast, _, directCalls, _ := c.timed(ctx, "direct", n, c.direct)
	c.runtimes += n
	benchfig.Figure(fmt.Sprintf("direct_to_secret_%d_s", n), directLast.Seconds(), 1.3*float64(directCalls)/tenantQPS)
	benchfig.Figure(fmt.Sprintf("kyma_to_direct_ratio_%d", n), last.Seconds()/directLast.Seconds(), 1.15)
	return ids
}

// newWhileReady: new Kyma CRs one a second while the runtimes above are Ready
// and polling; the latest time each stage was reached tells which binds.
func (c *composed) newWhileReady(ctx context.Context, n int) {
	var took []time.Duration
	last := map[string]time.Duration{}
	stages := []struct {
		name string
		done func(context.Context, string) bool
	}{
		{"eventingauth", func(_ context.Context, id string) bool { return c.watches.xrs.exists(id) }},
		{"managed_resources", func(_ context.Context, id string) bool {
			return c.watches.iasApplications.exists(id) && c.watches.runtimeSecrets.exists(id)
		}},
		{"runtime_secret", c.hasSecret},
	}
	for range n {
		id := c.nextID("kyma-new")
		if err := c.runtime(ctx, id); err != nil {
			c.b.Fatal(err)
		}
		start := time.Now()
		if err := c.kyma(ctx, id); err != nil {
			c.b.Fatal(err)
		}
		var d time.Duration
		for _, st := range stages {
			at := c.waitAll(ctx, []string{id}, 2*time.Minute, st.done)
			d = at[id].Sub(start)
			last[st.name] = max(last[st.name], d)
		}
		took = append(took, d) // the last stage: the runtime's Secret
		time.Sleep(time.Second)
	}
	for _, st := range stages {
		fmt.Printf("BENCH kyma_new_while_polling_max_s{%s} %.2f\n", st.name, last[st.name].Seconds())
	}
	benchfig.Figure("kyma_new_while_polling_p99_s", benchfig.Percentile(took, 0.99).Seconds(), 5)
}

// deleteAll deletes the Kyma CRs and waits until their Secrets, apps, XRs and
// managed resources are all gone.
func (c *composed) deleteAll(ctx context.Context, ids []string) {
	audit := newAuditReader(c.b, c.s)
	reconciles0, err := coreReconciles(ctx, c.s.CoreMetrics)
	if err != nil {
		c.b.Fatal(err)
	}
	stats0 := c.s.Sim.Stats()
	processName := c.processName()
	cpu0 := benchfig.CPUByCommand(processName)
	calls0, start := c.iasCalls(), time.Now()
	c.each(ctx, ids, func(ctx context.Context, id string) error {
		k := &unstructured.Unstructured{}
		k.SetGroupVersionKind(eventingauth.KymaKind)
		k.SetNamespace(localstack.KCPNamespace)
		k.SetName(id)
		return client.IgnoreNotFound(c.mgmt.Delete(ctx, k))
	})
	// The tenant's app names, read once a round rather than once per runtime:
	// the simulator's lock, held for each, slowed the deletion it measures.
	iasNames := newSnapshot(100*time.Millisecond, c.s.Sim.NameCounts)
	// The stages of a deletion, in the order they should happen: each one's
	// latest time tells which binds.
	stages := []struct {
		name string
		done func(context.Context, string) bool
	}{
		// The garbage collector deleted the EventingAuth; then core removed
		// its finalizer.
		{"xr_deleting", func(_ context.Context, id string) bool { return c.watches.xrs.deleting(id) }},
		{"xr", func(_ context.Context, id string) bool { return !c.watches.xrs.exists(id) }},
		{"runtime_secret", func(ctx context.Context, id string) bool { return !c.hasSecret(ctx, id) }},
		{"runtimesecret_mr", func(_ context.Context, id string) bool { return !c.watches.runtimeSecrets.exists(id) }},
		{"iasapplication_mr", func(_ context.Context, id string) bool { return !c.watches.iasApplications.exists(id) }},
		{"ias_app", func(_ context.Context, id string) bool { return iasNames.get()[id] == 0 }},
	}
	var mu sync.Mutex
	last := map[string]time.Duration{}
	each := map[string][]time.Duration{}
	seen := map[string]bool{}
	var outOfOrder atomic.Int32
	c.waitAll(ctx, ids, 20*time.Minute, func(ctx context.Context, id string) bool {
		all := true
		for _, st := range stages {
			mu.Lock()
			done := seen[id+"/"+st.name]
			mu.Unlock()
			if done {
				continue
			}
			if !st.done(ctx, id) {
				all = false
				continue
			}
			if st.name == "ias_app" && c.runtimeHoldsSecret(ctx, id) {
				outOfOrder.Add(1) // the app went while its runtime still held the credential
			}
			mu.Lock()
			seen[id+"/"+st.name] = true
			last[st.name] = max(last[st.name], time.Since(start))
			each[st.name] = append(each[st.name], time.Since(start))
			mu.Unlock()
		}
		return all
	})
	took := time.Since(start)
	printCPUByCommand(fmt.Sprintf("kyma_delete_%d", len(ids)), processName, cpu0, took)
	c.runtimes -= len(ids)
	benchfig.Figure(fmt.Sprintf("kyma_delete_%d_app_before_secret", len(ids)), float64(outOfOrder.Load()), 0)
	// What the garbage collector still deletes once all is gone (the
	// connection Secrets, the ProviderConfigUsages) is part of the deletion.
	c.gcQuiet(ctx)
	counts := audit.since()
	prefix := fmt.Sprintf("kyma_delete_%d", len(ids))
	printWritesPerRuntime(prefix, nil, counts.writes, len(ids))
	c.printIASCallsPerRuntime(prefix, stats0, len(ids))
	gcRequests := 0.0
	for _, k := range slices.Sorted(maps.Keys(counts.garbageCollector)) {
		gcRequests += counts.garbageCollector[k]
		if counts.garbageCollector[k] < 0.01*float64(len(ids)) {
			continue // a watch made again, a discovery
		}
		fmt.Printf("BENCH %s_gc_requests_per_runtime{%s} %.2f\n", prefix, commaKey(k), counts.garbageCollector[k]/float64(len(ids)))
	}
	fmt.Printf("BENCH %s_gc_requests_per_runtime %.2f\n", prefix, gcRequests/float64(len(ids)))
	reconciles, err := coreReconciles(ctx, c.s.CoreMetrics)
	if err != nil {
		c.b.Fatal(err)
	}
	for _, k := range slices.Sorted(maps.Keys(reconciles)) {
		if v := (reconciles[k] - reconciles0[k]) / float64(len(ids)); v >= 0.05 {
			fmt.Printf("BENCH %s_core_reconciles_per_runtime{%s} %.2f\n", prefix, k, v)
		}
	}
	// The stage that binds is the one that added the most to the time the
	// stage before it was done.
	var binds string
	var prev, most time.Duration
	for _, st := range stages {
		fmt.Printf("BENCH kyma_delete_%d_last_s{%s} %.1f\n", len(ids), st.name, last[st.name].Seconds())
		fmt.Printf("BENCH kyma_delete_%d_p50_s{%s} %.1f\n", len(ids), st.name, benchfig.Percentile(each[st.name], 0.5).Seconds())
		if d := last[st.name] - prev; d > most {
			binds, most = st.name, d
		}
		prev = max(prev, last[st.name])
	}
	fmt.Printf("BENCH kyma_delete_%d_binding_stage{%s} %.1f\n", len(ids), binds, most.Seconds())
	// The larger of IAS's bound (the calls the deletion made at the tenant's
	// rate) and the garbage collector's (the requests it made at its rate), as
	// the design states.
	calls := c.iasCalls() - calls0
	iasBound, gcBound := float64(calls)/tenantQPS, gcRequests/gcQPS
	fmt.Printf("BENCH kyma_delete_%d_ias_bound_s %.1f\n", len(ids), iasBound)
	fmt.Printf("BENCH kyma_delete_%d_gc_bound_s %.1f\n", len(ids), gcBound)
	fmt.Printf("BENCH kyma_delete_%d_ias_calls_per_runtime %.2f\n", len(ids), float64(calls)/float64(len(ids)))
	benchfig.Figure(fmt.Sprintf("kyma_delete_%d_s", len(ids)), took.Seconds(), 1.3*max(iasBound, gcBound))
}

// printCPUByCommand prints the CPU each process, named by name, used since
// before, those that used at least a second, and how busy the machine's cores
// were over took: at 1 the machine binds, not any one part.
func printCPUByCommand(prefix string, name func(string, []string) string, before map[string]time.Duration, took time.Duration) {
	var total time.Duration
	now := benchfig.CPUByCommand(name)
	for _, comm := range slices.Sorted(maps.Keys(now)) {
		d := now[comm] - before[comm]
		total += d
		if d >= time.Second {
			fmt.Printf("BENCH %s_cpu_s{%s} %.1f\n", prefix, comm, d.Seconds())
		}
	}
	fmt.Printf("BENCH %s_cores_busy %.2f (of %d)\n", prefix, total.Seconds()/took.Seconds(), goruntime.NumCPU())
}

// snapshot is a value read again at most every so often.
type snapshot[T any] struct {
	every time.Duration
	read  func() T

	mu sync.Mutex
	at time.Time
	v  T
}

func newSnapshot[T any](every time.Duration, read func() T) *snapshot[T] {
	return &snapshot[T]{every: every, read: read}
}

func (s *snapshot[T]) get() T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.at) >= s.every {
		s.v, s.at = s.read(), time.Now()
	}
	return s.v
}

// processName tells the management cluster's API server and etcd from the
// runtimes' (which stand in for API servers elsewhere), by the management API
// server's port and the etcd it names; e2e.test is this benchmark, with the
// IAS simulator and the runtime proxy.
func (c *composed) processName() func(string, []string) string {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.s.MgmtKubeconfig)
	if err != nil {
		c.b.Fatal(err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		c.b.Fatal(err)
	}
	apiserverPort := "=" + u.Port()
	var etcdURL string
	for _, args := range benchfig.CommandLines("kube-apiserver") {
		if slices.ContainsFunc(args, func(a string) bool { return strings.HasSuffix(a, apiserverPort) }) {
			for _, a := range args {
				if v, ok := strings.CutPrefix(a, "--etcd-servers="); ok {
					etcdURL = v
				}
			}
		}
	}
	return func(comm string, args []string) string {
		var mgmt bool
		switch comm {
		case "kube-apiserver":
			mgmt = slices.ContainsFunc(args, func(a string) bool { return strings.HasSuffix(a, apiserverPort) })
		case "etcd":
			mgmt = etcdURL != "" && slices.ContainsFunc(args, func(a string) bool {
				return strings.HasPrefix(a, "--listen-client-urls") && strings.Contains(a, etcdURL)
			})
		default:
			return comm
		}
		if mgmt {
			return comm + "/management"
		}
		return comm + "/runtime"
	}
}

// gcQuiet waits until the garbage collector has made no request for two
// seconds (at most a minute).
func (c *composed) gcQuiet(ctx context.Context) {
	a := newAuditReader(c.b, c.s)
	for end := time.Now().Add(time.Minute); time.Now().Before(end); {
		select {
		case <-ctx.Done():
			c.b.Fatal(ctx.Err())
		case <-time.After(2 * time.Second):
		}
		if len(a.since().garbageCollector) == 0 {
			return
		}
	}
}

type usage struct{ provider, core localstack.Usage }

func (c *composed) usage() usage {
	return usage{provider: c.s.Provider().Usage(), core: c.s.Crossplane().Usage()}
}

// printUsage prints CPU per 1,000 runtimes (bring-up, polls, deletion) and
// peak memory of the provider and Crossplane core.
func (c *composed) printUsage(since usage, runtimes int) {
	now := c.usage()
	per := 1000 / float64(runtimes)
	fmt.Printf("BENCH provider_cpu_s_per_1000_runtimes %.1f\n", per*(now.provider.CPU-since.provider.CPU).Seconds())
	fmt.Printf("BENCH crossplane_cpu_s_per_1000_runtimes %.1f\n", per*(now.core.CPU-since.core.CPU).Seconds())
	fmt.Printf("BENCH provider_peak_rss_mib %.0f\n", float64(now.provider.PeakRSS)/1024)
	fmt.Printf("BENCH crossplane_peak_rss_mib %.0f\n", float64(now.core.PeakRSS)/1024)
}
