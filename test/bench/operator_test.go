package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"debug/buildinfo"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/providerstack"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// An operator run puts eventing-auth-manager, the operator the provider
// replaces, through the provider's cycle on the same stack in the same run,
// so that the provider is held to what the operator costs on this machine in
// this hour, not to a figure taken on another day. It runs when
// BENCH_OPERATOR names an eventing-auth-manager binary (its cmd, built from
// its own repository; nothing of it is in this one).
//
// The operator runs as its manifest ships it but for leader election (it
// cannot find a namespace for its lease outside a cluster; the provider runs
// without it here too): a Kyma CR in kcp-system makes its EventingAuth, whose
// reconcile makes the IAS app and the Secret kyma-system/eventing-webhook-auth
// through the runtime's kubeconfig in kcp-system/kubeconfig-<name>.
type operatorRun struct {
	bin, log, metricsURL string
	cmd                  *exec.Cmd
	runtimes             *runtimeNamespaces
}

var (
	kymaKind         = metav1.TypeMeta{APIVersion: "operator.kyma-project.io/v1beta2", Kind: "Kyma"}
	operatorAuthKind = metav1.TypeMeta{APIVersion: "operator.kyma-project.io/v1alpha1", Kind: "EventingAuth"}
)

// operatorImageGODEBUG is what eventing-auth-manager's image (its Dockerfile)
// runs it with: FIPS 140-3 enforced, and TLS without the post-quantum ML-KEM
// key exchange.
const operatorImageGODEBUG = "GODEBUG=fips140=only,tlsmlkem=0"

// builtAsShipped tells whether bin was built as eventing-auth-manager's
// Dockerfile builds it, with Go's FIPS 140-3 module: a binary built otherwise
// spends CPU and memory on other code than the operator the landscapes run.
func builtAsShipped(bin string) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return err
	}
	for _, s := range info.Settings {
		if s.Key == "GOFIPS140" && strings.HasPrefix(s.Value, providerstack.FIPSModule) {
			return nil
		}
	}
	return fmt.Errorf("%s was not built with Go's FIPS 140-3 module %s; build it as its Dockerfile does: CGO_ENABLED=0 GOFIPS140=%s go build -o <path> ./cmd",
		bin, providerstack.FIPSModule, providerstack.FIPSModule)
}

// operatorFromEnv prepares an operator run when BENCH_OPERATOR is set: the
// Kyma and EventingAuth CRDs on the management API server and the runtimes'
// stand-ins. nil when it is not set.
func operatorFromEnv(b *testing.B) *operatorRun {
	bin := os.Getenv("BENCH_OPERATOR")
	if bin == "" {
		return nil
	}
	if err := builtAsShipped(bin); err != nil {
		b.Fatalf("BENCH_OPERATOR: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", stack.MgmtKubeconfig())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{
		filepath.Join("..", "crds", "operator.kyma-project.io_kymas.yaml"),
		filepath.Join("..", "crds", "operator.kyma-project.io_eventingauths.yaml"),
	}, ErrorIfPathMissing: true}); err != nil {
		b.Fatal(err)
	}
	return &operatorRun{bin: bin, runtimes: newRuntimeNamespaces(b)}
}

// start runs the operator afresh, logging under name.
func (o *operatorRun) start(b *testing.B, name string) {
	addr := freeAddr(b)
	o.metricsURL = "http://" + addr + "/metrics"
	o.log = filepath.Join(filepath.Dir(stack.Log(name)), name+".log")
	log, err := os.Create(o.log)
	if err != nil {
		b.Fatal(err)
	}
	o.cmd = exec.Command(o.bin, "--metrics-bind-address="+addr, "--health-probe-bind-address="+freeAddr(b))
	o.cmd.Env = append(os.Environ(), "KUBECONFIG="+stack.MgmtKubeconfig(),
		// The provider's IAS credentials Secret has the operator's keys.
		"IAS_CREDS_SECRET_NAMESPACE="+ns, "IAS_CREDS_SECRET_NAME=ias", operatorImageGODEBUG)
	o.cmd.Stdout, o.cmd.Stderr = log, log
	if err := o.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if l, _ := os.ReadFile(o.log); bytes.Count(l, []byte("Starting workers")) == 2 {
			return
		}
	}
	b.Fatalf("eventing-auth-manager did not start its workers within a minute; log:\n%s", tail(o.log))
}

func (o *operatorRun) stop() {
	_ = o.cmd.Process.Kill()
	_ = o.cmd.Wait()
}

// cycle runs the provider's cycle (BenchmarkCycle) on the operator and returns
// its CPU per runtime and its peak resident memory. The operator does not watch the runtimes, so the
// Secrets edited in the drift minute stay edited, as they would in a landscape.
func (o *operatorRun) cycle(ctx context.Context, b *testing.B, n int) cycleCost {
	name := fmt.Sprintf("operator-cycle-%d", n)
	o.start(b, name)
	defer o.stop()
	pid := o.cmd.Process.Pid

	cpu := map[string]time.Duration{}
	took := map[string]time.Duration{}
	phase := func(p string, run func()) {
		c0, t0, w0 := benchfig.UsageOf(pid).CPU, time.Now(), apiWrites(ctx, b)
		run()
		cpu[p], took[p] = benchfig.UsageOf(pid).CPU-c0, time.Since(t0)
		printPerRuntime(fmt.Sprintf("operator_cycle_api_writes_per_runtime_%d{%s}", n, p), w0, apiWrites(ctx, b), n)
	}
	m0 := scrapeAt(b, o.metricsURL)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = nextID(fmt.Sprintf("operator_bringup_%d", n))
	}
	var deleting iassim.Stats
	phase("bringup", func() {
		start := time.Now()
		o.bringUp(ctx, b, ids, 30*time.Minute)
		fmt.Printf("BENCH operator_cycle_bringup_s_%d %.1f\n", n, time.Since(start).Seconds())
	})
	quick := os.Getenv("BENCH_CYCLE_QUICK") != ""
	if !quick {
		phase("drift", func() {
			start := time.Now()
			editSecrets(ctx, b, ids[:n/10])
			time.Sleep(time.Until(start.Add(time.Minute)))
		})
		phase("rest", func() { time.Sleep(time.Minute) })
	}
	phase("delete", func() {
		st0 := sim.Stats()
		start := time.Now()
		o.teardown(ctx, b, ids, 30*time.Minute)
		fmt.Printf("BENCH operator_cycle_delete_s_%d %.1f\n", n, time.Since(start).Seconds())
		deleting = sim.Stats().Since(st0)
	})
	const singles = 5
	phase("singles", func() {
		for range singles {
			id := []string{nextID("operator-single")}
			o.bringUp(ctx, b, id, time.Minute)
			o.teardown(ctx, b, id, time.Minute)
		}
	})
	m1 := scrapeAt(b, o.metricsURL)
	runtimes := float64(n + singles)
	spent := phaseCPU("operator_cycle", n, cpu, took, runtimes)
	fmt.Printf("BENCH operator_cpu_ms_per_runtime_%d %.2f\n", n, spent.whole)
	fmt.Printf("BENCH operator_cpu_ms_per_runtime_bringup_delete_%d %.2f\n", n, spent.life)
	spent.peakMiB = float64(benchfig.UsageOf(pid).PeakRSS) / 1024
	fmt.Printf("BENCH operator_cycle_peak_rss_mib_%d %.1f\n", n, spent.peakMiB)
	reconciles := reconcilesByResult(m0, m1)
	for _, k := range slices.Sorted(maps.Keys(reconciles)) {
		fmt.Printf("BENCH operator_cycle_reconciles_per_runtime_%d{%s} %.2f\n", n, k, reconciles[k]/runtimes)
	}
	for _, op := range slices.Sorted(maps.Keys(deleting)) {
		fmt.Printf("BENCH operator_cycle_ias_calls_per_deleted_runtime_%d{%s} %.2f\n", n, op, float64(deleting.Count(op, 0))/float64(n))
	}
	return spent
}

// bringUp makes runtimes as a landscape hands them to the operator, at once
// as the provider's are made (32 at a time): the namespace that stands in for
// the runtime's kyma-system, its kubeconfig and its Kyma CR. It waits until the
// operator is done with each.
func (o *operatorRun) bringUp(ctx context.Context, b *testing.B, ids []string, limit time.Duration) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for _, id := range ids {
		g.Go(func() error {
			kc, err := o.runtimes.kubeconfig(id)
			if err != nil {
				return err
			}
			if err := rt.Create(gctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: id}}); err != nil {
				return err
			}
			if err := mgmt.Create(gctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + id, Namespace: ns},
				Data: map[string][]byte{"config": kc}}); err != nil {
				return err
			}
			kyma := operatorObject(kymaKind, id)
			kyma.Object["spec"] = map[string]any{"channel": "regular"}
			return mgmt.Create(gctx, kyma)
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	waitAllLogged(ctx, b, o.log, ids, limit, o.ready)
}

// teardown deletes runtimes' Kyma CRs and, as the garbage collector would
// (envtest runs none), the EventingAuths they own, and waits until the
// operator let go of each. Their kubeconfigs go then, as in a landscape.
func (o *operatorRun) teardown(ctx context.Context, b *testing.B, ids []string, limit time.Duration) {
	for _, id := range ids {
		for _, kind := range []metav1.TypeMeta{kymaKind, operatorAuthKind} {
			if err := mgmt.Delete(ctx, operatorObject(kind, id)); client.IgnoreNotFound(err) != nil {
				b.Fatal(err)
			}
		}
	}
	waitAllLogged(ctx, b, o.log, ids, limit, o.gone)
	for _, id := range ids {
		if err := mgmt.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + id, Namespace: ns}}); err != nil {
			b.Fatal(err)
		}
	}
}

// operatorObject is runtime id's object of kind in kcp-system.
func operatorObject(kind metav1.TypeMeta, id string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.GetObjectKind().SetGroupVersionKind(kind.GroupVersionKind())
	u.SetNamespace(ns)
	u.SetName(id)
	return u
}

// ready tells whether the operator is done with a new runtime: its Secret is
// there and its EventingAuth says Ready. The operator writes that status in
// reconciles after the one that made the Secret (one worker for all runtimes,
// so at bring-up they queue behind every other runtime's), and they are part of
// what a bring-up costs it. The provider writes Ready in the reconcile that
// makes the Secret.
func (o *operatorRun) ready(ctx context.Context, id string) bool {
	auth := operatorObject(operatorAuthKind, id)
	if !hasSecret(ctx, id) || mgmt.Get(ctx, client.ObjectKeyFromObject(auth), auth) != nil {
		return false
	}
	state, _, _ := unstructured.NestedString(auth.Object, "status", "state")
	return state == "Ready"
}

// gone tells whether the operator let go of a runtime: its EventingAuth, IAS
// app and runtime Secret gone.
func (o *operatorRun) gone(ctx context.Context, id string) bool {
	auth := operatorObject(operatorAuthKind, id)
	return !hasSecret(ctx, id) && len(sim.AppsNamed(id)) == 0 && kerrors.IsNotFound(mgmt.Get(ctx, client.ObjectKeyFromObject(auth), auth))
}

// runtimeNamespaces gives each of the operator's runtimes an API server of its
// own on the one runtime API server of the stack: https://<addr>/runtimes/<id>
// serves the runtime's kyma-system as the namespace <id>. The operator writes
// every runtime's Secret to kyma-system, which the provider is told the
// namespace of. Each runtime's kubeconfig names a server of its own
// (<id>.runtimes.bench), so the operator's client-go keeps a connection a
// runtime, as it does with a landscape's runtimes, whose CAs differ.
type runtimeNamespaces struct {
	srv   *httptest.Server
	caPEM []byte
}

const operatorNamespace = "kyma-system"

func newRuntimeNamespaces(b *testing.B) *runtimeNamespaces {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(runtimeKC)
	if err != nil {
		b.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		b.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ca, err := testcerts.NewCA("runtimes.bench")
	if err != nil {
		b.Fatal(err)
	}
	serving, err := ca.IssueServer("*.runtimes.bench")
	if err != nil {
		b.Fatal(err)
	}
	cert, err := tls.X509KeyPair(serving.CertPEM, serving.KeyPEM)
	if err != nil {
		b.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Transport: transport,
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			// The transport's own gzip, undone before ModifyResponse reads.
			r.Out.Header.Del("Accept-Encoding")
		},
		// An object comes back in kyma-system, as it would from the runtime:
		// the operator compares what it wrote into its status with it.
		ModifyResponse: func(resp *http.Response) error {
			id, _ := resp.Request.Context().Value(runtimeIDKey{}).(string)
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				return err
			}
			if moved, ok := objectInNamespace(body, id, operatorNamespace); ok {
				body = moved
				resp.Header.Set("Content-Type", runtime.ContentTypeJSON)
			}
			resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		},
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, path, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/runtimes/"), "/")
		if !ok || !strings.HasPrefix(r.URL.Path, "/runtimes/") {
			http.NotFound(w, r)
			return
		}
		r.URL.Path, r.URL.RawPath = "/"+inNamespace(path, id), ""
		r = r.WithContext(context.WithValue(r.Context(), runtimeIDKey{}, id))
		if r.ContentLength != 0 && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if moved, ok := objectInNamespace(body, operatorNamespace, id); ok {
				body = moved
				r.Header.Set("Content-Type", runtime.ContentTypeJSON)
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	b.Cleanup(srv.Close)
	return &runtimeNamespaces{srv: srv, caPEM: ca.PEM}
}

// inNamespace is an API path with the namespace kyma-system put as id.
func inNamespace(path, id string) string {
	const in = "/namespaces/" + operatorNamespace
	if i := strings.Index(path, in); i >= 0 && (len(path) == i+len(in) || path[i+len(in)] == '/') {
		return path[:i] + "/namespaces/" + id + path[i+len(in):]
	}
	return path
}

// runtimeIDKey holds the runtime a proxied request is for.
type runtimeIDKey struct{}

// objectInNamespace is an object the operator sends or is sent (its client
// speaks protobuf to a Kubernetes API server for Kubernetes' own kinds) moved
// from namespace from to namespace to, as JSON; false for anything else.
func objectInNamespace(body []byte, from, to string) ([]byte, bool) {
	obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return nil, false
	}
	m, err := meta.Accessor(obj)
	if err != nil || m.GetNamespace() != from {
		return nil, false
	}
	m.SetNamespace(to)
	out, err := runtime.Encode(scheme.Codecs.LegacyCodec(gvk.GroupVersion()), obj)
	return out, err == nil
}

// kubeconfig is runtime id's kubeconfig: the runtime's admin user, on a
// server of its own.
func (r *runtimeNamespaces) kubeconfig(id string) ([]byte, error) {
	cfg, err := clientcmd.Load(runtimeKC)
	if err != nil {
		return nil, err
	}
	for _, cl := range cfg.Clusters {
		cl.Server = r.srv.URL + "/runtimes/" + id
		cl.CertificateAuthorityData = r.caPEM
		cl.TLSServerName = id + ".runtimes.bench"
	}
	return clientcmd.Write(*cfg)
}
