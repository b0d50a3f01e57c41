package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/providerstack"
	"github.com/kyma-project/provider-eventing-auth/test/support/testlog"
)

// The stack every figure is taken on: a management and a runtime API server
// (envtest), the IAS simulator as IAS answers (50 rps per client, 100 ms), and
// the provider binary as users run it, with its default flags but --poll.
var (
	mgmt, rt    client.Client
	sim         *iassim.Running
	stack       *providerstack.Stack
	provider    *exec.Cmd
	runtimeKC   []byte
	providerLog string
	metricsURL  string
)

const (
	ns = providerstack.Namespace
	// tenantQPS is the ProviderConfig's default rateLimit.qps, the IAS bound.
	tenantQPS = 40.0
	// iasLatency is how long the simulator takes to answer, as IAS does.
	iasLatency = 100 * time.Millisecond
	// benchPoll is the poll of the provider under test (the 60s).
	benchPoll = time.Minute
)

func TestMain(m *testing.M) {
	flag.Parse()
	testlog.Setup(os.Stderr)
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		// `go test ./...` runs no benchmark: no stack to start.
		os.Exit(m.Run())
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run `make bench`")
		os.Exit(1)
	}
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	work, err := os.MkdirTemp("", "eventing-auth-bench-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	s, err := providerstack.Start(context.Background(), work, iassim.Options{Latency: iasLatency})
	if err != nil {
		return 0, err
	}
	defer s.Stop()
	stack, mgmt, rt, sim, runtimeKC = s, s.Mgmt, s.Runtime, s.Sim, s.RuntimeKubeconfig
	return m.Run(), nil
}

// startProvider starts the provider binary with its default flags and args,
// its metrics on a port of its own.
func startProvider(b *testing.B, args ...string) {
	startProviderAs(b, "provider", args...)
}

// restartProvider kills the provider (SIGKILL: nothing it holds in memory
// survives) and starts it again with the same args, logging under name.
func restartProvider(b *testing.B, name string, args ...string) {
	_ = provider.Process.Kill()
	_ = provider.Wait()
	startProviderAs(b, name, args...)
}

// waitServing waits until the provider's managed-resource controllers have
// started their workers (its caches synced): what a start costs before any
// resource is served, whatever its neighbours. It returns how long that took.
func waitServing(b *testing.B) time.Duration {
	start := time.Now()
	for deadline := start.Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		log, _ := os.ReadFile(providerLog)
		served := 0
		for _, kind := range []string{"managed/iasapplication.", "managed/runtimesecret."} {
			for _, line := range strings.Split(string(log), "\n") {
				if strings.Contains(line, `"msg":"Starting workers"`) && strings.Contains(line, kind) {
					served++
					break
				}
			}
		}
		if served == 2 {
			return time.Since(start)
		}
	}
	b.Fatalf("the provider's controllers did not start within a minute; log:\n%s", logTail())
	return 0
}

func startProviderAs(b *testing.B, name string, args ...string) {
	addr := freeAddr(b)
	metricsURL = "http://" + addr + "/metrics"
	args = append(args, "--kyma-bridge=false", "--metrics-bind-address="+addr)
	// BENCH_PROVIDER_ARGS compares settings, e.g. "--max-reconcile-rate=50".
	args = append(args, strings.Fields(os.Getenv("BENCH_PROVIDER_ARGS"))...)
	var err error
	if provider, err = stack.Provider(name, args...); err != nil {
		b.Fatal(err)
	}
	providerLog = stack.Log(name)
}

func newRuntime(ctx context.Context, id string) error {
	return newRuntimeVia(ctx, id, "")
}

// newRuntimeVia makes a runtime whose kubeconfig points at server (host:port),
// a proxy to the runtime API server; "" is the API server itself.
func newRuntimeVia(ctx context.Context, id, server string) error {
	if err := rt.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: id}}); err != nil {
		return err
	}
	if err := createKubeconfig(ctx, id, server); err != nil {
		return err
	}
	app := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns}}
	app.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: id + "-ias"})
	if err := mgmt.Create(ctx, app); err != nil {
		return err
	}
	rs := &runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns},
		Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: runtimev1alpha1.RuntimeSecretParameters{
			RuntimeID:      id,
			ApplicationRef: &xpv2.NamespacedReference{Name: id},
			Target:         runtimev1alpha1.TargetSecret{Namespace: id, Name: "eventing-webhook-auth"},
		}}}
	return mgmt.Create(ctx, rs)
}

// createKubeconfig makes the Secret kubeconfig-<id>, pointing at server
// unless it is "". Every runtime has a kubeconfig of its own, so a client of
// its own, as in a landscape; only the context's name tells them apart here.
func createKubeconfig(ctx context.Context, id, server string) error {
	kc, err := kubeconfigNamed(id, server)
	if err != nil {
		return err
	}
	return mgmt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + id, Namespace: ns},
		Data: map[string][]byte{"config": kc}})
}

// kubeconfigNamed is the runtime's admin kubeconfig with its context named id,
// pointing at server (host:port) unless it is "".
func kubeconfigNamed(id, server string) ([]byte, error) {
	cfg, err := clientcmd.Load(runtimeKC)
	if err != nil {
		return nil, err
	}
	c := cfg.Contexts[cfg.CurrentContext]
	delete(cfg.Contexts, cfg.CurrentContext)
	cfg.Contexts[id], cfg.CurrentContext = c, id
	if server != "" {
		for _, cl := range cfg.Clusters {
			cl.Server = "https://" + server
		}
	}
	return clientcmd.Write(*cfg)
}

// deleteRuntime deletes a runtime's resources.
func deleteRuntime(ctx context.Context, id string) error {
	if err := mgmt.Delete(ctx, &runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns}}); err != nil {
		return err
	}
	// The kubeconfig goes with the runtime, after the RuntimeSecret cleaned up.
	return mgmt.Delete(ctx, &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns}})
}

// hasSecret tells whether the runtime's Secret is there.
func hasSecret(ctx context.Context, id string) bool {
	s := &corev1.Secret{}
	return rt.Get(ctx, client.ObjectKey{Namespace: id, Name: "eventing-webhook-auth"}, s) == nil && len(s.Data["client_secret"]) > 0
}

// iasCalls is the number of API requests IAS answered so far, 429s included.
func iasCalls() (total, throttled int) {
	for _, codes := range sim.Stats() {
		for code, n := range codes {
			total += n
			if code == 429 {
				throttled += n
			}
		}
	}
	return total, throttled
}

// creationCalls counts the calls that only making a runtime takes.
func creationCalls() int {
	st := sim.Stats()
	return st.Count(operation.ListApplications, 0) + st.Count(operation.CreateApplication, 0) +
		st.Count(operation.CreateAPISecret, 0) + st.Count(operation.WellKnown, 0)
}

// logTail is the end of the provider's log, for failures.
func logTail() string { return tail(providerLog) }

// logLines is how many lines the provider has logged so far.
func logLines(b *testing.B) int {
	b.Helper()
	log, err := os.ReadFile(providerLog)
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Count(log, []byte("\n"))
}

// tail is the end of a log file, for failures.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	s := string(b)
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return strings.TrimSpace(s)
}

func key2(id string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: id} }
