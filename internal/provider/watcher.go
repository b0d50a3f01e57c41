package provider

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kyma-project/provider-eventing-auth/internal/controller/runtimesecret"
	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
)

// watcherLease is the Lease in which the leader publishes where its
// runtime-watcher listener is reached.
const watcherLease = "provider-eventing-auth-runtime-watcher"

// newWatcher builds the runtime-watcher listener and runs it on every
// replica: with leader election and --runtime-watcher-advertise-address, a
// standby hands each event to the leader.
func newWatcher(s Settings, p Process, mgr ctrl.Manager) (*runtimewatcher.Listener, error) {
	cas, missing, err := runtimewatcher.LoadClientCAs(s.WatcherClientCA)
	if err != nil {
		return nil, err
	}
	switch {
	case cas == nil:
		p.Log.Info("The runtime-watcher listener authenticates no caller: set --runtime-watcher-client-ca, or let nothing but the gateway reach it")
	case missing:
		p.Log.Info("The file of --runtime-watcher-client-ca does not exist: every runtime-watcher event is refused, and runtimes are repaired by polls only, until it does. Copy ca.crt of istio-system/klm-watcher-root-secret into the Secret the file is mounted from (docs/operations.md, Runtime-watcher)",
			"file", s.WatcherClientCA)
	}
	o := runtimewatcher.Options{Addr: s.WatcherAddr, Component: s.WatcherComponent, ClientCAs: cas, ClientCAFile: s.WatcherClientCA, ClientCAMissing: missing,
		Metrics: runtimewatcher.NewMetrics(p.Metrics), Log: p.Log.WithName("runtime-watcher")}
	if s.LeaderElection && s.WatcherAdvertise != "" {
		ns, err := leaseNamespace(s)
		if err != nil {
			return nil, err
		}
		o.Advertise = s.WatcherAdvertise
		o.Leader = runtimewatcher.LeaseAddress{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Namespace: ns, Name: watcherLease}
		if o.RelayKey, err = relayKey(context.Background(), mgr.GetAPIReader(), mgr.GetClient(), ns); err != nil {
			return nil, err
		}
	}
	w := runtimewatcher.New(o, runtimesecret.Targets{Reader: mgr.GetClient()})
	if err := mgr.Add(w); err != nil {
		return nil, err
	}
	return w, nil
}

// relaySecret holds the key the replicas sign the events they hand to each
// other with: made by the first replica that finds none, in the namespace of
// the leader election Lease, readable only by whoever may read Secrets there.
const relaySecret = "provider-eventing-auth-relay"

// relayKey returns the replicas' shared key, making it if there is none.
func relayKey(ctx context.Context, r client.Reader, w client.Writer, ns string) ([]byte, error) {
	key := types.NamespacedName{Namespace: ns, Name: relaySecret}
	for range 2 {
		sec := &corev1.Secret{}
		err := r.Get(ctx, key, sec)
		if err == nil && len(sec.Data["key"]) >= 32 {
			return sec.Data["key"], nil
		}
		if err != nil && !kerrors.IsNotFound(err) {
			return nil, fmt.Errorf("cannot read Secret %s, the runtime-watcher relay key: %w", key, err)
		}
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: relaySecret}, Data: map[string][]byte{"key": b}}
		err = w.Create(ctx, sec)
		if err == nil {
			return b, nil
		}
		if !kerrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("cannot create Secret %s, the runtime-watcher relay key: %w", key, err)
		}
		// Another replica made it first: read its key.
	}
	return nil, fmt.Errorf("Secret %s, the runtime-watcher relay key, holds no key of 32 bytes", key)
}

// claimNamespace is where app name claims are kept: beside the leader
// election Lease, in a namespace only the platform writes; outside a cluster
// without --leader-election-namespace, the Kyma namespace.
func claimNamespace(s Settings) string {
	if ns, err := leaseNamespace(s); err == nil {
		return ns
	}
	return s.KymaNamespace
}

// leaseNamespace is where leader election keeps its Lease: the flag, else
// the pod's namespace, as controller-runtime finds it.
func leaseNamespace(s Settings) (string, error) {
	if s.LeaderElectionNamespace != "" {
		return s.LeaderElectionNamespace, nil
	}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns, nil
	}
	b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return "", fmt.Errorf("cannot tell the namespace of the leader election Lease: set --leader-election-namespace: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
