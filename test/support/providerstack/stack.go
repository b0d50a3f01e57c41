// Package providerstack runs the provider binary as users run it, for tests and
// benchmarks that need it as a process: a management and a runtime API server
// (envtest), the IAS simulator with the default ClusterProviderConfig pointing
// at it, and the provider built from this checkout.
package providerstack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// Namespace holds the IAS credentials, the kubeconfigs and the resources.
const Namespace = "kcp-system"

// FIPSModule is the Go FIPS 140-3 module the provider's package is built
// with, and ImageGODEBUG the setting its image runs it with
// (hack/crossplane/image).
const (
	FIPSModule   = "v1.0.0"
	ImageGODEBUG = "GODEBUG=fips140=only"
)

// Stack is a running management cluster, runtime and IAS tenant.
type Stack struct {
	// Mgmt and Runtime are clients of the two API servers.
	Mgmt, Runtime client.Client
	// RuntimeKubeconfig is an admin kubeconfig of the runtime.
	RuntimeKubeconfig []byte
	// Sim is the IAS tenant.
	Sim *iassim.Running

	work, mgmtKubeconfig, bin string
	envs                      []*envtest.Environment
	procs                     []*exec.Cmd
}

// Start brings the stack up in work, the provider built but not started.
func Start(ctx context.Context, work string, sim iassim.Options) (s *Stack, err error) {
	s = &Stack{work: work}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	mgmtEnv := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(root, "package", "crds")}, ErrorIfCRDPathMissing: true}
	rtEnv := &envtest.Environment{}
	for _, e := range []*envtest.Environment{mgmtEnv, rtEnv} {
		if _, err := e.Start(); err != nil {
			return s, err
		}
		s.envs = append(s.envs, e)
	}
	scheme := fakes.Scheme()
	if s.Mgmt, err = client.New(mgmtEnv.Config, client.Options{Scheme: scheme}); err != nil {
		return s, err
	}
	if s.Runtime, err = client.New(rtEnv.Config, client.Options{Scheme: scheme}); err != nil {
		return s, err
	}
	mgmtKC, err := adminKubeconfig(mgmtEnv)
	if err != nil {
		return s, err
	}
	s.mgmtKubeconfig = filepath.Join(work, "mgmt.kubeconfig")
	if err := os.WriteFile(s.mgmtKubeconfig, mgmtKC, 0o600); err != nil {
		return s, err
	}
	if s.RuntimeKubeconfig, err = adminKubeconfig(rtEnv); err != nil {
		return s, err
	}
	if s.Sim, err = iassim.New(sim).Serve("127.0.0.1:0", false); err != nil {
		return s, err
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ias", Namespace: Namespace},
			StringData: map[string]string{"username": "admin", "password": "admin-password", "url": s.Sim.URL}},
		&v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ClusterProviderConfigSpec{
			Credentials: v1alpha1.ClusterCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.SecretReference{Name: "ias", Namespace: Namespace}}}},
	} {
		if err := s.Mgmt.Create(ctx, o); err != nil {
			return s, err
		}
	}
	s.bin = filepath.Join(work, "provider")
	// Built as its package builds it (hack/xpkg.sh), with Go's FIPS 140-3
	// module, so that what a run measures is what users run.
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", s.bin, "./cmd/provider")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFIPS140="+FIPSModule)
	if out, err := build.CombinedOutput(); err != nil {
		return s, fmt.Errorf("cannot build the provider: %v\n%s", err, out)
	}
	return s, nil
}

// Provider starts a provider process logging into <work>/<name>.log, with its
// metrics and probes on free ports and the given flags.
func (s *Stack) Provider(name string, args ...string) (*exec.Cmd, error) {
	log, err := os.Create(s.Log(name))
	if err != nil {
		return nil, err
	}
	// The simulators and runtime stand-ins answer plain http on loopback.
	cmd := exec.Command(s.bin, append([]string{"--metrics-bind-address=127.0.0.1:0", "--metrics-secure=false", "--health-probe-bind-address=127.0.0.1:0",
		"--test-plain-http-loopback"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.mgmtKubeconfig, ImageGODEBUG)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.procs = append(s.procs, cmd)
	return cmd, nil
}

// MgmtKubeconfig is the path of the management cluster's admin kubeconfig.
func (s *Stack) MgmtKubeconfig() string { return s.mgmtKubeconfig }

// Log is the path of a provider process's log.
func (s *Stack) Log(name string) string { return filepath.Join(s.work, name+".log") }

// Stop ends every process and API server.
func (s *Stack) Stop() {
	for _, p := range s.procs {
		_ = p.Process.Kill()
		_ = p.Wait()
	}
	if s.Sim != nil {
		_ = s.Sim.Close()
	}
	for _, e := range s.envs {
		_ = e.Stop()
	}
}

func adminKubeconfig(env *envtest.Environment) ([]byte, error) {
	u, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	return u.KubeConfig()
}
