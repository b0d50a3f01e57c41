// Command local runs provider-eventing-auth end to end on this machine with
// embedded defaults: a local kube-apiserver + etcd (built from the Go module
// proxy) as the management cluster, a second one as the Kyma runtime, the IAS
// simulator, the provider as its own process, one IASApplication and one
// RuntimeSecret. It shows both Ready with their conditions and the Secret on the
// runtime (keys only, never values), then deletes both and shows the Secret and
// the IAS app gone.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
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

	step("Starting two local kube-apiservers + etcd: the management cluster (with the provider's CRDs) and a Kyma runtime")
	root, _ := os.Getwd()
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(root, "package", "crds")}, ErrorIfCRDPathMissing: true}
	rtEnv := &envtest.Environment{}
	rtStarted := make(chan error, 1)
	go func() { _, err := rtEnv.Start(); rtStarted <- err }()
	cfg, err := env.Start()
	if rtErr := <-rtStarted; err == nil {
		err = rtErr
	}
	defer env.Stop()   //nolint:errcheck // Best effort.
	defer rtEnv.Stop() //nolint:errcheck // Best effort.
	if err != nil {
		return fmt.Errorf("cannot start the local API servers (KUBEBUILDER_ASSETS=%s): %w", os.Getenv("KUBEBUILDER_ASSETS"), err)
	}
	kcPath, _, err := writeKubeconfig(env, work, "management")
	if err != nil {
		return err
	}
	rtPath, rtKubeconfig, err := writeKubeconfig(rtEnv, work, "runtime")
	if err != nil {
		return err
	}
	fmt.Println("    management cluster:", cfg.Host)
	fmt.Println("    Kyma runtime:      ", rtEnv.Config.Host)

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

	rt, err := client.New(rtEnv.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	step("On the runtime: namespace kyma-system. On the management cluster: namespace %s, Secrets eventing-auth-ias-creds and kubeconfig-%s, ClusterProviderConfig default", ns, runtimeID)
	if err := rt.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kyma-system"}}); err != nil {
		return err
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eventing-auth-ias-creds", Namespace: ns},
			StringData: map[string]string{"username": "admin", "password": password, "url": sim.URL}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + runtimeID, Namespace: ns},
			Data: map[string][]byte{"config": rtKubeconfig}},
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

	step("Creating IASApplication %s/%s (the runtime ID) with connection Secret %s-ias, and RuntimeSecret %s/%s referring to it", ns, runtimeID, runtimeID, ns, runtimeID)
	app := &iasv1alpha1.IASApplication{
		ObjectMeta: metav1.ObjectMeta{Name: runtimeID, Namespace: ns},
		Spec: iasv1alpha1.IASApplicationSpec{ManagedResourceSpec: xpv2.ManagedResourceSpec{
			WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: runtimeID + "-ias"}}},
	}
	rs := &runtimev1alpha1.RuntimeSecret{
		ObjectMeta: metav1.ObjectMeta{Name: runtimeID, Namespace: ns},
		Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: runtimev1alpha1.RuntimeSecretParameters{
			RuntimeID:      runtimeID,
			ApplicationRef: &xpv2.NamespacedReference{Name: runtimeID},
		}},
	}
	for _, o := range []client.Object{app, rs} {
		if err := kube.Create(ctx, o); err != nil {
			return err
		}
	}
	for _, o := range []managedObject{app, rs} {
		if err := waitFor(ctx, func() (bool, error) {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return false, err
			}
			return o.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue, nil
		}); err != nil {
			return fmt.Errorf("%s did not become Ready: %w (provider log: %s)", o.GetName(), err, tail(logFile.Name()))
		}
	}
	kubectl(kcPath, "get", "iasapplications,runtimesecrets", "-n", ns)
	kubectl(kcPath, "describe", "iasapplication", runtimeID, "-n", ns)
	kubectl(kcPath, "describe", "runtimesecret", runtimeID, "-n", ns)
	fmt.Printf("\n    IAS now has %d application(s); %q has UUID %s\n", len(sim.Apps()), runtimeID, meta.GetExternalName(app))

	step("The Secret on the Kyma runtime (kubectl describe shows keys and sizes, never values)")
	kubectl(rtPath, "describe", "secret", "eventing-webhook-auth", "-n", "kyma-system")

	step("Deleting the RuntimeSecret, then the IASApplication: the runtime's Secret and the IAS application go with them")
	for _, o := range []client.Object{rs, app} {
		if err := kube.Delete(ctx, o); err != nil {
			return err
		}
		if err := waitFor(ctx, func() (bool, error) {
			err := kube.Get(ctx, client.ObjectKeyFromObject(o), o)
			return kerrors.IsNotFound(err), client.IgnoreNotFound(err)
		}); err != nil {
			return err
		}
	}
	err = rt.Get(ctx, types.NamespacedName{Namespace: "kyma-system", Name: "eventing-webhook-auth"}, &corev1.Secret{})
	if !kerrors.IsNotFound(err) {
		return fmt.Errorf("the Secret on the runtime was not deleted (%v)", err)
	}
	fmt.Printf("    Both resources gone; kyma-system/eventing-webhook-auth is gone from the runtime; IAS now has %d application(s)\n", len(sim.Apps()))
	if len(sim.Apps()) != 0 {
		return fmt.Errorf("the IAS application was not deleted")
	}
	step("Done: everything started here is stopped and removed")
	return nil
}

// managedObject is a managed resource of either kind.
type managedObject interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

// writeKubeconfig writes an admin kubeconfig for env into dir and returns its
// path and content.
func writeKubeconfig(env *envtest.Environment, dir, name string) (string, []byte, error) {
	user, err := env.AddUser(envtest.User{Name: "local-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", nil, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	return path, kc, os.WriteFile(path, kc, 0o600)
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
