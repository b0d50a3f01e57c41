// Command local runs provider-eventing-auth end to end on this machine with
// embedded defaults: a local kube-apiserver + etcd (built from the Go module
// proxy), the IAS simulator, the provider as its own process, one IASApplication.
// It shows the resource Ready with its conditions and the connection Secret's keys
// (never values), then deletes the resource and shows the IAS app gone.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/provider-eventing-auth/apis"
	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/iassim"
)

const (
	ns        = "kcp-system"
	runtimeID = "54f3e0c2-5a8b-4d77-9f3b-1f6a3c2e9d10"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "local-run failed:", err)
		os.Exit(1)
	}
}

func step(format string, a ...any) { fmt.Printf("\n==> "+format+"\n", a...) }

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	work, err := os.MkdirTemp("", "eventing-auth-local-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work) //nolint:errcheck // Best effort.

	step("Starting a local kube-apiserver + etcd and installing the provider's CRDs")
	root, _ := os.Getwd()
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(root, "package", "crds")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("cannot start the local API server (KUBEBUILDER_ASSETS=%s): %w", os.Getenv("KUBEBUILDER_ASSETS"), err)
	}
	defer env.Stop() //nolint:errcheck // Best effort.
	user, err := env.AddUser(envtest.User{Name: "local-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return err
	}
	kcPath := filepath.Join(work, "kubeconfig")
	if err := os.WriteFile(kcPath, kubeconfig, 0o600); err != nil {
		return err
	}
	fmt.Println("    API server:", cfg.Host)

	step("Starting the IAS simulator")
	password := "local-" + fmt.Sprint(time.Now().UnixNano())
	sim, err := iassim.New(iassim.Options{Username: "admin", Password: password}).Serve("127.0.0.1:0", false)
	if err != nil {
		return err
	}
	defer sim.Close() //nolint:errcheck // Best effort.
	fmt.Println("    IAS tenant:", sim.URL)

	scheme := kruntime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apis.AddToScheme(scheme)
	kube, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}

	step("Creating namespace %s, Secret eventing-auth-ias-creds and ClusterProviderConfig default", ns)
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eventing-auth-ias-creds", Namespace: ns},
			StringData: map[string]string{"username": "admin", "password": password, "url": sim.URL}},
		&v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec: v1alpha1.ClusterProviderConfigSpec{Credentials: v1alpha1.ClusterCredentials{
				Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.SecretReference{Name: "eventing-auth-ias-creds", Namespace: ns}}}},
	}
	for _, o := range objs {
		if err := kube.Create(ctx, o); err != nil {
			return err
		}
	}

	step("Building and starting the provider")
	bin := filepath.Join(work, "provider")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/provider").CombinedOutput(); err != nil {
		return fmt.Errorf("cannot build the provider: %v\n%s", err, out)
	}
	provider := exec.CommandContext(ctx, bin, "--poll=30s", "--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0")
	provider.Env = append(os.Environ(), "KUBECONFIG="+kcPath)
	logFile, err := os.Create(filepath.Join(work, "provider.log"))
	if err != nil {
		return err
	}
	provider.Stdout, provider.Stderr = logFile, logFile
	if err := provider.Start(); err != nil {
		return err
	}
	defer func() { _ = provider.Process.Kill(); _, _ = provider.Process.Wait() }()

	step("Creating IASApplication %s/%s (the runtime ID) with connection Secret %s-ias", ns, runtimeID, runtimeID)
	app := &iasv1alpha1.IASApplication{
		ObjectMeta: metav1.ObjectMeta{Name: runtimeID, Namespace: ns},
		Spec: iasv1alpha1.IASApplicationSpec{ManagedResourceSpec: xpv2.ManagedResourceSpec{
			WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: runtimeID + "-ias"}}},
	}
	if err := kube.Create(ctx, app); err != nil {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return false, err
		}
		return app.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue, nil
	}); err != nil {
		return fmt.Errorf("the IASApplication did not become Ready: %w (provider log: %s)", err, tail(logFile.Name()))
	}
	kubectl(kcPath, "get", "iasapplications", "-n", ns)
	kubectl(kcPath, "describe", "iasapplication", runtimeID, "-n", ns)

	step("Connection Secret %s/%s-ias (keys only)", ns, runtimeID)
	s := &corev1.Secret{}
	if err := kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: runtimeID + "-ias"}, s); err != nil {
		return err
	}
	keys := make([]string, 0, len(s.Data))
	for k, v := range s.Data {
		keys = append(keys, fmt.Sprintf("%s (%d bytes)", k, len(v)))
	}
	sort.Strings(keys)
	fmt.Println("    " + strings.Join(keys, "\n    "))
	fmt.Printf("    IAS now has %d application(s); %q has UUID %s\n", len(sim.Apps()), runtimeID, meta.GetExternalName(app))

	step("Deleting the IASApplication: the IAS application goes with it")
	if err := kube.Delete(ctx, app); err != nil {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		err := kube.Get(ctx, client.ObjectKeyFromObject(app), app)
		return kerrors.IsNotFound(err), client.IgnoreNotFound(err)
	}); err != nil {
		return err
	}
	fmt.Printf("    IASApplication gone; IAS now has %d application(s)\n", len(sim.Apps()))
	if len(sim.Apps()) != 0 {
		return fmt.Errorf("the IAS application was not deleted")
	}
	step("Done: everything started here is stopped and removed")
	return nil
}

func waitFor(ctx context.Context, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// kubectl runs the kubectl built beside kube-apiserver, so a fresh machine needs none.
func kubectl(kubeconfig string, args ...string) {
	fmt.Printf("\n$ kubectl %s\n", strings.Join(args, " "))
	cmd := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	_ = cmd.Run()
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
