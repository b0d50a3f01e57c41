package provider

import (
	"fmt"
	"os"
	"strings"

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
	cas, err := runtimewatcher.LoadClientCAs(s.WatcherClientCA)
	if err != nil {
		return nil, err
	}
	if cas == nil {
		p.Log.Info("The runtime-watcher listener authenticates no caller: set --runtime-watcher-client-ca, or let nothing but the gateway reach it")
	}
	o := runtimewatcher.Options{Addr: s.WatcherAddr, Component: s.WatcherComponent, ClientCAs: cas,
		Metrics: runtimewatcher.NewMetrics(p.Metrics), Log: p.Log.WithName("runtime-watcher")}
	if s.LeaderElection && s.WatcherAdvertise != "" {
		ns, err := leaseNamespace(s)
		if err != nil {
			return nil, err
		}
		o.Advertise = s.WatcherAdvertise
		o.Leader = runtimewatcher.LeaseAddress{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Namespace: ns, Name: watcherLease}
	}
	w := runtimewatcher.New(o, runtimesecret.Targets{Reader: mgr.GetClient()})
	if err := mgr.Add(w); err != nil {
		return nil, err
	}
	return w, nil
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
