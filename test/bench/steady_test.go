package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	apisv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/iasapplication"
	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// steadyNamespace holds the seeded runtimes' Secrets on the runtime API server:
// one namespace, a Secret named after each runtime.
const steadyNamespace = "runtimes"

// BenchmarkSteady takes the figures of a landscape at rest at BENCH_RUNTIMES (default
// 10,000) Ready runtimes. It builds that steady state directly, as the provider
// leaves it (apps and secrets in the simulator; IASApplication, RuntimeSecret,
// kubeconfig and connection Secret per runtime with their status; the runtime
// Secrets), then starts the provider with its default flags, which is what a
// restart is, and measures:
//   - the first full observe cycle against its bound, and 429 answers in it;
//   - new runtimes created during that cycle (p99 to their Secret);
//   - that the cycle wrote nothing: seeded objects keep their resourceVersion;
//   - the average IAS load over BENCH_STEADY_WINDOW (default the 5m poll), with
//     one app deleted and one changed in IAS, both of which must be repaired
//     within the poll (plus its jitter and the inventory age);
//   - the provider's resident memory, beside BENCH_UNRELATED_SECRETS (default
//     as many as runtimes) Secrets of other components in the management
//     cluster, which the provider must not keep.
func BenchmarkSteady(b *testing.B) {
	n := envInt("BENCH_RUNTIMES", 10000)
	window := 5 * time.Minute
	if v := os.Getenv("BENCH_STEADY_WINDOW"); v != "" {
		window, _ = time.ParseDuration(v)
	}
	for range b.N {
		ctx := context.Background()
		start := time.Now()
		ids := seed(ctx, b, n)
		unrelated := envInt("BENCH_UNRELATED_SECRETS", n)
		seedUnrelatedSecrets(ctx, b, unrelated)
		fmt.Printf("BENCH steady_seed_s_%d %.1f\n", n, time.Since(start).Seconds())
		fmt.Printf("BENCH unrelated_secrets_%d %d\n", n, unrelated)
		fw, watcherArgs := watcherOn(ctx, b)
		restartCycle(ctx, b, n, ids, watcherArgs...)
		cpu0, atRest := benchfig.UsageOf(provider.Process.Pid).CPU, time.Now()
		iasRPS := steadyLoad(ctx, b, n, ids, window)
		restCPU(n, benchfig.UsageOf(provider.Process.Pid).CPU-cpu0, time.Since(atRest))
		watcherRepairs(ctx, b, n, ids, fw, iasRPS)
		kib := rssKiB()
		benchfig.Figure(fmt.Sprintf("rss_mib_%d", n), float64(kib)/1024, 300*float64(n)/10000)
		fmt.Printf("BENCH rss_kib_per_runtime_%d %.1f\n", n, float64(kib)/float64(n))
		memoryParts(b, n)
		foreignSecretsBeside(ctx, b)
	}
}

// foreignSecretsBeside makes 200 Secrets of 1 MiB named like kubeconfigs in a
// namespace other than the Kyma CRs' and prints how much the provider's
// resident memory grew: it watches Secrets only in the Kyma CRs' namespace, so
// none of them reaches it.
func foreignSecretsBeside(ctx context.Context, b *testing.B) {
	const ns, n = "tenant-b", 200
	if err := mgmt.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	before := rssKiB()
	junk := strings.Repeat("j", 1<<20-1024)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			return mgmt.Create(gctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("kubeconfig-junk-%03d", i)},
				StringData: map[string]string{"config": junk}})
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	// Time for a watch, were there one, to deliver them all.
	time.Sleep(10 * time.Second)
	benchfig.Figure("foreign_secrets_200mib_rss_growth_mib", float64(rssKiB()-before)/1024, 16)
}

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	return def
}

func steadyID(i int) string { return fmt.Sprintf("steady-%05d", i) }

// seed builds n Ready runtimes as the provider leaves them (kubeconfigs are
// made as in newRuntime, so each runtime has a client of its own).
func seed(ctx context.Context, b *testing.B, n int) []string {
	if err := rt.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: steadyNamespace}}); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, n)
	now := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(48)
	for i := range ids {
		ids[i] = steadyID(i)
		g.Go(func() error { return seedOne(gctx, ids[i], now, i) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return ids
}

// seedUnrelatedSecrets makes n Secrets of other components in a namespace of
// their own, 2 KiB of data each and the copy kubectl apply keeps of it.
func seedUnrelatedSecrets(ctx context.Context, b *testing.B, n int) {
	const other = "other-component"
	if err := mgmt.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}}); err != nil {
		b.Fatal(err)
	}
	data := strings.Repeat("x", 2048)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(48)
	for i := range n {
		g.Go(func() error {
			return mgmt.Create(gctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: fmt.Sprintf("unrelated-%05d", i),
					Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"token":"` + data + `"}}`}},
				StringData: map[string]string{"token": data}})
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// seedOne makes one runtime's app, objects and runtime Secret. Secrets were
// last listed at times spread over the past, as a provider that has run for a
// while leaves them.
func seedOne(ctx context.Context, id string, now time.Time, i int) error {
	app := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns,
		Finalizers: []string{"finalizer.managedresource.crossplane.io"}}}
	app.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: id + "-ias"})
	appID := sim.AddApp(iassim.App{Name: app.AppName(), DisplayName: app.AppDisplayName(), Description: iasapplication.OwnedDescription(app),
		Secrets: []iassim.Secret{{Description: iasv1alpha1.DefaultSecretDescription, AuthorizationScopes: []string{"oAuth"}}}})
	stored, _ := sim.App(appID)
	secret := stored.Secrets[0]
	meta.SetExternalName(app, appID)
	if err := mgmt.Create(ctx, app); err != nil {
		return err
	}
	// The provider's record that the app uses the ProviderConfig, made as it makes it.
	app.SetGroupVersionKind(iasv1alpha1.IASApplicationGroupVersionKind)
	if err := resource.NewProviderConfigUsageTracker(mgmt, &apisv1alpha1.ProviderConfigUsage{}).Track(ctx, app); err != nil {
		return err
	}
	published := metav1.NewTime(now.Add(-2 * time.Hour).Truncate(time.Second))
	// Listed over the past 55 minutes: none falls due (1h) before the restart
	// cycle is over, so any write the cycle makes is one it should not; in the
	// steady window they fall due as they would in a provider long running.
	checked := metav1.NewTime(now.Add(-time.Duration(i%3300) * time.Second).Truncate(time.Second))
	app.Status.AtProvider = iasv1alpha1.IASApplicationObservation{ID: appID, ClientID: stored.ClientID,
		TokenURL: sim.URL + "/oauth2/token", CertsURL: sim.URL + "/oauth2/certs",
		SecretID: secret.ID, SecretHint: secret.Hint, SecretPublishedAt: &published, SecretsCheckedAt: &checked}
	// Every condition a long-running provider has set, so that the restart
	// finds nothing to write.
	app.SetConditions(xpv2.Available().WithObservedGeneration(app.Generation), xpv2.ReconcileSuccess().WithObservedGeneration(app.Generation),
		xpv2.Condition{Type: iasapplication.TypeCertsURL, Status: corev1.ConditionTrue, Reason: iasapplication.ReasonFitsIssuer,
			LastTransitionTime: metav1.Now(), ObservedGeneration: app.Generation})
	if err := mgmt.Status().Update(ctx, app); err != nil {
		return err
	}
	data := map[string][]byte{
		iasv1alpha1.KeyClientID: []byte(stored.ClientID), iasv1alpha1.KeyClientSecret: []byte(secret.Value),
		iasv1alpha1.KeyTokenURL: []byte(app.Status.AtProvider.TokenURL), iasv1alpha1.KeyCertsURL: []byte(app.Status.AtProvider.CertsURL),
	}
	conn := resource.LocalConnectionSecretFor(app, iasv1alpha1.IASApplicationGroupVersionKind)
	conn.Data = data
	if err := mgmt.Create(ctx, conn); err != nil {
		return err
	}
	if err := createKubeconfig(ctx, id, ""); err != nil {
		return err
	}
	rs := &runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns,
		Finalizers: []string{"finalizer.managedresource.crossplane.io"}},
		Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: runtimev1alpha1.RuntimeSecretParameters{
			RuntimeID:            id,
			ApplicationRef:       &xpv2.NamespacedReference{Name: id},
			CredentialsSecretRef: &xpv2.LocalSecretReference{Name: id + "-ias"},
			Target:               runtimev1alpha1.TargetSecret{Namespace: steadyNamespace, Name: id},
		}}}
	if err := mgmt.Create(ctx, rs); err != nil {
		return err
	}
	rs.Status.AtProvider = runtimev1alpha1.RuntimeSecretObservation{ClusterID: id, NamespacedName: steadyNamespace + "/" + id,
		DataHash: runtimev1alpha1.DataHash(data)}
	rs.SetConditions(xpv2.Available().WithObservedGeneration(rs.Generation), xpv2.ReconcileSuccess().WithObservedGeneration(rs.Generation))
	if err := mgmt.Status().Update(ctx, rs); err != nil {
		return err
	}
	return rt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: steadyNamespace,
		Labels: runtimev1alpha1.SecretLabels()}, Type: corev1.SecretTypeOpaque, Data: data})
}

// restartCycle starts the provider on the seeded state and waits until each
// resource was observed once. Meanwhile new runtimes arrive, one every 2s.
func restartCycle(ctx context.Context, b *testing.B, n int, ids []string, args ...string) {
	before := versions(ctx, b, ids)
	calls0, throttled0 := iasCalls()
	apps := len(sim.Apps())
	start := time.Now()
	startProvider(b, args...)
	// New runtimes arrive once the provider has synced its caches and begun the
	// cycle: its start-up is not theirs.
	for m := scrape(b); m.reconciles("iasapplication") == 0 || m.reconciles("runtimesecret") == 0; m = scrape(b) {
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("BENCH restart_caches_synced_s_%d %.1f\n", n, time.Since(start).Seconds())

	var took []time.Duration
	var mu sync.Mutex
	var wg sync.WaitGroup
	var cycleDone atomic.Bool
	wg.Go(func() {
		for i := 0; i < 10 || !cycleDone.Load(); i++ {
			id := nextID("restart-new")
			t := time.Now()
			if err := newRuntime(ctx, id); err != nil {
				b.Error(err)
				return
			}
			wg.Go(func() {
				at := waitAll(ctx, b, []string{id}, 5*time.Minute, hasSecret)
				mu.Lock()
				took = append(took, at[id].Sub(t))
				mu.Unlock()
			})
			time.Sleep(2 * time.Second)
		}
	})

	// The IAS side of the cycle (every IASApplication observed once) and the
	// runtime side (every RuntimeSecret observed once, no IAS call) end apart.
	var iasCycle, runtimeCycle time.Duration
	var calls, throttled int
	var listing float64
	for iasCycle == 0 || runtimeCycle == 0 {
		if time.Since(start) > 30*time.Minute {
			b.Fatalf("the first observe cycle did not complete in 30m; provider log:\n%s", logTail())
		}
		m := scrape(b)
		// Resources waiting for the tenant's listing are in no queue yet.
		if iasCycle == 0 && m.reconciles("iasapplication") >= float64(n) && m.depth("iasapplication") == 0 &&
			m.only("eventing_auth_ias_first_listing_waiting").GetGauge().GetValue() == 0 {
			iasCycle = time.Since(start)
			calls, throttled = iasCalls()
		}
		if runtimeCycle == 0 && m.reconciles("runtimesecret") >= float64(n) && m.depth("runtimesecret") == 0 {
			runtimeCycle = time.Since(start)
		}
		// The IAS side ends within seconds of the listing, the figure it is
		// held against: read often enough that the reading's own delay is
		// not part of it.
		if iasCycle == 0 {
			time.Sleep(100 * time.Millisecond)
		} else {
			time.Sleep(500 * time.Millisecond)
		}
	}
	cycleDone.Store(true)
	// How long the provider's listing of the tenant took, its pages one after
	// the other. Read once the cycle is over: the listing's end lets the
	// waiting observes go a moment before it is recorded, and a scrape in
	// between read no listing at all (a ratio of 4.6 in one run).
	for listing == 0 && time.Since(start) < 30*time.Minute {
		h := scrape(b).only("eventing_auth_ias_listing_duration_seconds").GetHistogram()
		if h.GetSampleCount() > 0 {
			listing = h.GetSampleSum() / float64(h.GetSampleCount())
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()

	// What bounds a cycle that only observes is IAS: its calls at the tenant's
	// rate, and the listing of the tenant, whose pages IAS answers one after the
	// other (each names the next): the cycle cannot end before the last page.
	// The simulator shares the cores with the API servers and the provider, so
	// its pages take longer than its latency; the ratio against pages x latency
	// is printed too.
	pages := (apps + 99) / 100
	iasBound := max(float64(calls-calls0)/tenantQPS, listing)
	fmt.Printf("BENCH restart_cycle_s_%d %.1f\n", n, iasCycle.Seconds())
	fmt.Printf("BENCH restart_ias_calls_%d %d\n", n, calls-calls0)
	fmt.Printf("BENCH restart_ias_listing_pages_%d %d\n", n, pages)
	fmt.Printf("BENCH restart_ias_listing_s_%d %.1f\n", n, listing)
	fmt.Printf("BENCH restart_ias_bound_s_%d %.1f\n", n, iasBound)
	benchfig.Figure(fmt.Sprintf("restart_cycle_ratio_%d", n), iasCycle.Seconds()/max(iasBound, 1), 1.1)
	fmt.Printf("BENCH restart_cycle_ratio_to_latency_%d %.2f\n", n, iasCycle.Seconds()/(float64(pages)*iasLatency.Seconds()))
	fmt.Printf("BENCH restart_429_%d %d\n", n, throttled-throttled0)
	// No IAS call; bound by the runtimes' API servers, here one server for all.
	fmt.Printf("BENCH restart_runtime_cycle_s_%d %.1f\n", n, runtimeCycle.Seconds())
	benchfig.Figure(fmt.Sprintf("new_runtime_p99_s_%d", n), benchfig.Percentile(took, 0.99).Seconds(), 5)
	fmt.Printf("BENCH new_runtime_p50_s_%d %.3f\n", n, benchfig.Percentile(took, 0.5).Seconds())
	fmt.Printf("BENCH new_runtimes_%d %d\n", n, len(took))

	// An observe that finds everything as it should be writes nothing.
	changed := 0
	after := versions(ctx, b, ids)
	for k, v := range before {
		if after[k] != v {
			changed++
			fmt.Printf("  written: %s\n", k)
		}
	}
	benchfig.Figure(fmt.Sprintf("restart_objects_written_%d", n), float64(changed), 1)
}

// restCPU prints the provider's CPU at rest per 1,000 runtimes a minute, at
// the default poll, held to a tenth of a core per 1,000 runtimes: what a
// landscape requests for the provider at rest (docs/performance.md).
func restCPU(n int, cpu, took time.Duration) {
	benchfig.Figure(fmt.Sprintf("rest_cpu_s_per_min_per_1000_%d", n), cpu.Seconds()/took.Minutes()*1000/float64(n), 6)
}

// versions are the resourceVersions of every 100th runtime's objects.
func versions(ctx context.Context, b *testing.B, ids []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(ids); i += 100 {
		id := ids[i]
		for _, o := range []client.Object{&iasv1alpha1.IASApplication{}, &runtimev1alpha1.RuntimeSecret{}} {
			if err := mgmt.Get(ctx, key2(id), o); err != nil {
				b.Fatal(err)
			}
			out[fmt.Sprintf("%T/%s", o, id)] = o.GetResourceVersion()
		}
		s := &corev1.Secret{}
		if err := rt.Get(ctx, client.ObjectKey{Namespace: steadyNamespace, Name: id}, s); err != nil {
			b.Fatal(err)
		}
		out["runtime/"+id] = s.ResourceVersion
	}
	return out
}

// steadyLoad measures the IAS load with every runtime Ready over a window, with
// one app deleted and one changed in IAS at its start: both are repaired within
// the poll.
func steadyLoad(ctx context.Context, b *testing.B, n int, ids []string, window time.Duration) (iasRPS float64) {
	deleted, changed := ids[n/3], ids[2*n/3]
	app := &iasv1alpha1.IASApplication{}
	if err := mgmt.Get(ctx, key2(changed), app); err != nil {
		b.Fatal(err)
	}
	changedID := meta.GetExternalName(app)
	calls0, throttled0 := iasCalls()
	start := time.Now()
	for _, a := range sim.AppsNamed(deleted) {
		sim.DeleteApp(a.ID)
	}
	sim.MutateApp(changedID, func(a *iassim.App) { a.DisplayName = "changed in the console" })

	repaired := map[string]time.Duration{}
	for time.Since(start) < window || len(repaired) < 2 {
		if time.Since(start) > window+5*time.Minute {
			break
		}
		if _, ok := repaired[deleted]; !ok && len(sim.AppsNamed(deleted)) == 1 {
			repaired[deleted] = time.Since(start)
		}
		if a, ok := sim.App(changedID); ok && a.DisplayName == changed {
			if _, ok := repaired[changed]; !ok {
				repaired[changed] = time.Since(start)
			}
		}
		time.Sleep(time.Second)
	}
	elapsed := time.Since(start)
	calls, throttled := iasCalls()
	iasRPS = float64(calls-calls0) / elapsed.Seconds()
	benchfig.Figure(fmt.Sprintf("steady_ias_rps_%d", n), iasRPS, 20)
	fmt.Printf("BENCH steady_429_%d %d\n", n, throttled-throttled0)
	// A poll falls due within the poll interval plus its 10% jitter, and reads a
	// listing of the tenant at most the inventory age (30s) old.
	bound := 1.1*(5*time.Minute).Seconds() + 30
	for key, id := range map[string]string{"deleted": deleted, "changed": changed} {
		d, ok := repaired[id]
		if !ok {
			d = 2 * elapsed // not repaired: a figure that fails its bound
		}
		benchfig.Figure(fmt.Sprintf("steady_app_%s_repaired_s_%d", key, n), d.Seconds(), bound)
	}
	return iasRPS
}

// memoryParts prints what the resident memory is made of, by the Go
// runtime's own figures: the live heap and the collector's headroom are the
// cache's; heap pages freed but not yet returned to the system and a peak far
// above the end tell a burst's leftovers from growth; stacks follow the
// goroutines (two per open HTTP/1.1 connection).
func memoryParts(b *testing.B, n int) {
	m := scrape(b)
	mib := func(metric string) float64 { return m.only(metric).GetGauge().GetValue() / (1 << 20) }
	fmt.Printf("BENCH rss_peak_mib_%d %.1f\n", n, float64(benchfig.UsageOf(provider.Process.Pid).PeakRSS)/1024)
	fmt.Printf("BENCH heap_inuse_mib_%d %.1f\n", n, mib("go_memstats_heap_inuse_bytes"))
	fmt.Printf("BENCH heap_unreturned_mib_%d %.1f\n", n, mib("go_memstats_heap_idle_bytes")-mib("go_memstats_heap_released_bytes"))
	fmt.Printf("BENCH stack_mib_%d %.1f\n", n, mib("go_memstats_stack_inuse_bytes"))
	fmt.Printf("BENCH goroutines_%d %.0f\n", n, m.only("go_goroutines").GetGauge().GetValue())
}

// metricsSample is one scrape of the provider's metrics.
type metricsSample map[string]*dto.MetricFamily

// scrape reads the provider's Prometheus metrics; none while it does not answer.
func scrape(b *testing.B) metricsSample { return scrapeAt(b, metricsURL) }

// scrapeAt reads the Prometheus metrics a process serves at url.
func scrapeAt(b *testing.B, url string) metricsSample {
	resp, err := http.Get(url)
	if err != nil {
		return metricsSample{}
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		b.Logf("cannot parse the metrics at %s: %v", url, err)
		return metricsSample{}
	}
	return families
}

// sum adds the series of a counter or gauge whose controller label names kind.
func (m metricsSample) sum(metric, kind string) float64 {
	total := 0.0
	for _, s := range m[metric].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "controller" && strings.Contains(l.GetValue(), kind) {
				total += s.GetCounter().GetValue() + s.GetGauge().GetValue()
			}
		}
	}
	return total
}

// labelValue is the value of a series' label name, "" if it has none.
func labelValue(s *dto.Metric, name string) string {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// only is the one series of a metric without labels; nil when there is none,
// which reads as zero.
func (m metricsSample) only(metric string) *dto.Metric {
	if f := m[metric]; f != nil && len(f.GetMetric()) == 1 {
		return f.GetMetric()[0]
	}
	return nil
}

func (m metricsSample) reconciles(kind string) float64 {
	return m.sum("controller_runtime_reconcile_total", kind)
}

func (m metricsSample) depth(kind string) float64 {
	return m.sum("workqueue_depth", kind)
}

// writesTo counts the provider's write requests (POST, PUT, PATCH, DELETE) to
// the API server at host (host:port), by client-go's metrics.
func (m metricsSample) writesTo(host string) float64 {
	total := 0.0
	for method, n := range m.requestsTo(host) {
		if method != "GET" {
			total += n
		}
	}
	return total
}

// requestsTo counts the provider's requests to the API server at host
// (host:port) by method, by client-go's metrics.
func (m metricsSample) requestsTo(host string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m["rest_client_requests_total"].GetMetric() {
		if labelValue(s, "host") == host {
			out[labelValue(s, "method")] += s.GetCounter().GetValue()
		}
	}
	return out
}
