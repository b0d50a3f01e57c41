// Command local runs provider-eventing-auth end to end on this machine with
// embedded defaults: a management control plane with Crossplane core, whose
// package manager installs the packages built here from an OCI registry on
// loopback, the composition functions and the garbage collector, a second
// control plane as the Kyma runtime, the IAS simulator and the provider, all as
// local processes built from the Go module proxy.
//
// As `make local-run` a Kyma CR is created and turned into a Ready EventingAuth,
// an IAS application and the runtime's Secret (shown by keys, never values);
// then the Kyma CR is deleted and everything is shown gone. With --keep-running
// (`make local-up`) the stack stays up for you to try things, until Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
)

const runtimeID = "54f3e0c2-5a8b-4d77-9f3b-1f6a3c2e9d10"

func main() {
	keepRunning := flag.Bool("keep-running", false, "Start the stack, print what to try and keep it running until Ctrl-C.")
	flag.Parse()
	run, name := demo, "local-run"
	if *keepRunning {
		run, name = up, "local-up"
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, name+" failed:", err)
		os.Exit(1)
	}
}

func step(format string, a ...any) { fmt.Printf("\n==> "+format+"\n", a...) }

// startStack starts the stack in a new work directory, which the caller
// removes after stopping the stack.
func startStack(ctx context.Context, providerArgs ...string) (*localstack.Stack, string, error) {
	work, err := os.MkdirTemp("", "eventing-auth-local-")
	if err != nil {
		return nil, "", err
	}
	root, err := localstack.RepoRoot()
	if err != nil {
		return nil, work, err
	}
	step("Starting two local API servers (the management cluster and a Kyma runtime), an OCI registry with the packages built here,\n    Crossplane core, kube-controller-manager's garbage collector, the IAS simulator; installing with cluster/install.yaml")
	s, err := localstack.Start(ctx, localstack.Options{
		Root: root, Assets: os.Getenv("KUBEBUILDER_ASSETS"), Tools: os.Getenv("CROSSPLANE_TOOLS"),
		Work: work, ProviderArgs: providerArgs,
	})
	return s, work, err
}

func demo() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, work, err := startStack(ctx, "--poll=30s")
	if work != "" {
		defer os.RemoveAll(work) //nolint:errcheck // Best effort.
	}
	if err != nil {
		return err
	}
	defer s.Stop()
	fmt.Println("    IAS tenant (simulator):", s.Sim.URL)
	fmt.Println("    Crossplane's package manager installed the Configuration, the provider and the functions; the provider and the functions run as local processes")
	kubectl(s.MgmtKubeconfig, "get", "configurations,providers,functions,managedresourcedefinitions")

	step("The runtime %s: namespace kyma-system there, its kubeconfig in Secret %s/kubeconfig-%s here", runtimeID, localstack.KCPNamespace, runtimeID)
	if err := s.AddRuntime(ctx, runtimeID); err != nil {
		return err
	}

	step("Creating the Kyma CR %s/%s (global account ga-local), as the lifecycle manager would", localstack.KCPNamespace, runtimeID)
	kyma, err := s.CreateKyma(ctx, runtimeID, "ga-local")
	if err != nil {
		return err
	}
	xr := &unstructured.Unstructured{}
	xr.SetGroupVersionKind(eventingauth.Kind)
	key := client.ObjectKey{Namespace: localstack.KCPNamespace, Name: runtimeID}
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := s.Kube.Get(ctx, key, xr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return localstack.Condition(xr, "Ready") == "True", nil
	}); err != nil {
		return fmt.Errorf("the EventingAuth did not become Ready: %w (provider log: %s)", err, s.Provider().Tail())
	}
	kubectl(s.MgmtKubeconfig, "get", "kymas,eventingauths.composite.eventingauth.kyma-project.io,iasapplications,runtimesecrets", "-n", localstack.KCPNamespace)
	kubectl(s.MgmtKubeconfig, "describe", "eventingauths.composite.eventingauth.kyma-project.io", runtimeID, "-n", localstack.KCPNamespace)

	step("In IAS")
	for _, a := range s.Sim.Apps() {
		fmt.Printf("    application %q: id %s, client ID %s, global account %s, %d client secret(s)\n", a.Name, a.ID, a.ClientID, a.GlobalAccount, len(a.Secrets))
	}

	step("On the Kyma runtime (kubectl describe shows keys and sizes, never values)")
	kubectl(s.RuntimeKubeconfig, "describe", "secret", "eventing-webhook-auth", "-n", "kyma-system")

	step("Deleting the Kyma CR: the garbage collector deletes the EventingAuth, Crossplane its parts; the IASApplication waits until the RuntimeSecret has removed the runtime's Secret")
	if err := s.Kube.Delete(ctx, kyma); err != nil {
		return err
	}
	start := time.Now()
	gone := map[string]time.Duration{}
	objs := map[string]client.Object{"EventingAuth": xr, "RuntimeSecret": &runtimev1alpha1.RuntimeSecret{}, "IASApplication": &iasv1alpha1.IASApplication{}}
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for name, o := range objs {
			if _, ok := gone[name]; !ok && kerrors.IsNotFound(s.Kube.Get(ctx, key, o)) {
				gone[name] = time.Since(start).Round(100 * time.Millisecond)
			}
		}
		return len(gone) == len(objs), nil
	}); err != nil {
		return fmt.Errorf("not everything was deleted (%v): %w", gone, err)
	}
	fmt.Printf("    RuntimeSecret gone after %s, IASApplication after %s, EventingAuth after %s\n", gone["RuntimeSecret"], gone["IASApplication"], gone["EventingAuth"])
	err = s.RuntimeKube.Get(ctx, client.ObjectKey{Namespace: "kyma-system", Name: "eventing-webhook-auth"}, &corev1.Secret{})
	if !kerrors.IsNotFound(err) {
		return fmt.Errorf("the Secret is still on the runtime (%v)", err)
	}
	fmt.Printf("    kyma-system/eventing-webhook-auth is gone from the runtime; IAS has %d application(s)\n", len(s.Sim.Apps()))
	if len(s.Sim.Apps()) != 0 {
		return fmt.Errorf("the IAS application was not deleted")
	}
	kubectl(s.MgmtKubeconfig, "get", "kymas,eventingauths.composite.eventingauth.kyma-project.io,iasapplications,runtimesecrets", "-n", localstack.KCPNamespace)
	step("Done: everything started here is stopped and removed")
	return nil
}

// kubectl runs the kubectl built beside kube-apiserver, so a fresh machine needs none.
func kubectl(kubeconfig string, args ...string) {
	fmt.Printf("\n$ kubectl %s\n", strings.Join(args, " "))
	cmd := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	_ = cmd.Run()
}
