package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/provider-eventing-auth/apis"
	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/internal/iassim"
)

// The stack every figure is taken on: a management and a runtime API server
// (envtest), the IAS simulator as IAS answers (50 rps per client, 100 ms), and
// the provider binary as users run it, with its default flags but --poll.
var (
	mgmt, rt    client.Client
	sim         *iassim.Running
	provider    *exec.Cmd
	runtimeKC   []byte
	providerLog string
)

const (
	ns = "kcp-system"
	// tenantQPS is the ProviderConfig's default rateLimit.qps, the IAS bound.
	tenantQPS = 40.0
	// benchPoll is the poll of the provider under test (the 60s).
	benchPoll = time.Minute
)

func TestMain(m *testing.M) {
	flag.Parse()
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
	mgmtEnv := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "package", "crds")}, ErrorIfCRDPathMissing: true}
	rtEnv := &envtest.Environment{}
	for _, e := range []*envtest.Environment{mgmtEnv, rtEnv} {
		if _, err := e.Start(); err != nil {
			return 0, err
		}
		defer e.Stop() //nolint:errcheck // Best effort at exit.
	}
	scheme := kruntime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apis.AddToScheme(scheme)
	mgmtKC, err := adminKubeconfig(mgmtEnv)
	if err != nil {
		return 0, err
	}
	if runtimeKC, err = adminKubeconfig(rtEnv); err != nil {
		return 0, err
	}
	if mgmt, err = client.New(mgmtEnv.Config, client.Options{Scheme: scheme}); err != nil {
		return 0, err
	}
	if rt, err = client.New(rtEnv.Config, client.Options{Scheme: scheme}); err != nil {
		return 0, err
	}
	if sim, err = iassim.New(iassim.Options{Latency: 100 * time.Millisecond}).Serve("127.0.0.1:0", false); err != nil {
		return 0, err
	}
	defer sim.Close() //nolint:errcheck // Best effort at exit.
	ctx := context.Background()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ias", Namespace: ns},
			StringData: map[string]string{"username": "admin", "password": "admin-password", "url": sim.URL}},
		&v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ClusterProviderConfigSpec{
			Credentials: v1alpha1.ClusterCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.SecretReference{Name: "ias", Namespace: ns}}}},
	}
	for _, o := range objs {
		if err := mgmt.Create(ctx, o); err != nil {
			return 0, err
		}
	}
	kcPath := filepath.Join(work, "mgmt.kubeconfig")
	if err := os.WriteFile(kcPath, mgmtKC, 0o600); err != nil {
		return 0, err
	}
	bin := filepath.Join(work, "provider")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/provider").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("cannot build the provider: %v\n%s", err, out)
	}
	providerLog = filepath.Join(work, "provider.log")
	logf, err := os.Create(providerLog)
	if err != nil {
		return 0, err
	}
	args := []string{"--poll=" + benchPoll.String(), "--kyma-bridge=false", "--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0"}
	// BENCH_PROVIDER_ARGS compares settings, e.g. "--max-reconcile-rate=50".
	args = append(args, strings.Fields(os.Getenv("BENCH_PROVIDER_ARGS"))...)
	provider = exec.Command(bin, args...)
	provider.Env = append(os.Environ(), "KUBECONFIG="+kcPath)
	provider.Stdout, provider.Stderr = logf, logf
	if err := provider.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = provider.Process.Kill(); _ = provider.Wait() }()
	return m.Run(), nil
}

func adminKubeconfig(env *envtest.Environment) ([]byte, error) {
	u, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	return u.KubeConfig()
}

// newRuntime creates what one runtime takes: an IASApplication, a RuntimeSecret
// referring to it, and the target namespace on the runtime (all runtimes share
// one runtime API server, each with its own namespace).
func newRuntime(ctx context.Context, id string) error {
	if err := rt.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: id}}); err != nil {
		return err
	}
	// Every runtime has a kubeconfig of its own, so a client of its own, as in a
	// landscape; only the context's name tells them apart here.
	kc, err := kubeconfigNamed(id)
	if err != nil {
		return err
	}
	if err := mgmt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + id, Namespace: ns},
		Data: map[string][]byte{"config": kc}}); err != nil {
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

// kubeconfigNamed is the runtime's admin kubeconfig with its context named id.
func kubeconfigNamed(id string) ([]byte, error) {
	cfg, err := clientcmd.Load(runtimeKC)
	if err != nil {
		return nil, err
	}
	c := cfg.Contexts[cfg.CurrentContext]
	delete(cfg.Contexts, cfg.CurrentContext)
	cfg.Contexts[id], cfg.CurrentContext = c, id
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
func logTail() string {
	b, _ := os.ReadFile(providerLog)
	s := string(b)
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return strings.TrimSpace(s)
}

func key2(id string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: id} }
