package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
)

// up starts the stack with a runtime ready for a Kyma CR, prints what to try
// and keeps everything running until Ctrl-C.
func up() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	metrics, err := localstack.FreeAddr()
	if err != nil {
		return err
	}
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	s, work, err := startStack(startCtx, "--poll=30s", "--metrics-bind-address="+metrics, "--metrics-secure=false")
	cancel()
	if work != "" {
		defer os.RemoveAll(work) //nolint:errcheck // Best effort.
	}
	if err != nil {
		return err
	}
	defer s.Stop()
	if err := s.AddRuntime(ctx, runtimeID); err != nil {
		return err
	}
	kyma := filepath.Join(work, "kyma.yaml")
	if err := os.WriteFile(kyma, fmt.Appendf(nil, `apiVersion: %s
kind: Kyma
metadata:
  name: %s
  namespace: %s
  labels: {%s: ga-local}
spec: {channel: regular}
`, eventingauth.KymaKind.GroupVersion(), runtimeID, localstack.KCPNamespace, eventingauth.LabelGlobalAccount), 0o644); err != nil {
		return err
	}
	// The IAS credentials as they are now, to put back after breaking them;
	// written to a file so the password is never printed.
	creds := &corev1.Secret{}
	if err := s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: "eventing-auth-ias-creds"}, creds); err != nil {
		return err
	}
	restore := filepath.Join(work, "restore-password.json")
	if err := os.WriteFile(restore, fmt.Appendf(nil, `{"data":{"password":%q}}`, b64(creds.Data["password"])), 0o600); err != nil {
		return err
	}

	step("Running. In another terminal:")
	fmt.Printf(`
  export PATH=%[1]s:$PATH   # kubectl v1.35.8, built here
  export MGMT=%[2]s RUNTIME=%[3]s

  # A Kyma CR appears: the bridge makes its EventingAuth, Crossplane the IASApplication and
  # the RuntimeSecret, the provider the app in IAS and the Secret on the runtime.
  kubectl --kubeconfig $MGMT apply -f %[4]s
  kubectl --kubeconfig $MGMT -n kcp-system get kymas,eventingauths.composite.eventingauth.kyma-project.io,iasapplications,runtimesecrets
  # The EventingAuth's tree, each part with its Synced and Ready state (Crossplane's CLI, built here):
  KUBECONFIG=$MGMT %[10]s
  kubectl --kubeconfig $RUNTIME -n kyma-system describe secret eventing-webhook-auth

  # Delete the runtime's Secret and watch it come back within a second: the runtime's
  # webhook (the runtime-watcher's stand-in) tells the provider at once, not at a poll.
  kubectl --kubeconfig $RUNTIME -n kyma-system delete secret eventing-webhook-auth
  kubectl --kubeconfig $RUNTIME -n kyma-system get secrets --watch

  # Break the IAS password and read what the provider says; then put it back.
  kubectl --kubeconfig $MGMT -n kcp-system patch secret eventing-auth-ias-creds -p '{"stringData":{"password":"wrong"}}'
  kubectl --kubeconfig $MGMT -n kcp-system describe iasapplication %[5]s
  kubectl --kubeconfig $MGMT -n kcp-system patch secret eventing-auth-ias-creds --patch-file %[6]s

  # Delete the Kyma CR: the Secret leaves the runtime, then the app leaves IAS.
  kubectl --kubeconfig $MGMT -n kcp-system delete kyma %[5]s

  Packages:      kubectl --kubeconfig $MGMT get configurations,providers,functions,managedresourcedefinitions
  Metrics:       http://%[7]s/metrics (curl -s http://%[7]s/metrics | grep eventing_auth_)
  IAS simulator: %[8]s (counts by operation: curl --cacert %[9]s/ias-ca.crt %[8]s/_sim/stats)
  Logs:          %[9]s/*.log

Ctrl-C stops everything started here and removes %[9]s.
`, os.Getenv("KUBEBUILDER_ASSETS"), s.MgmtKubeconfig, s.RuntimeKubeconfig, kyma, runtimeID, restore, metrics, s.Sim.URL, work,
		strings.Join(s.TraceCommand(runtimeID), " "))
	<-ctx.Done()
	step("Stopping everything started here")
	return nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
