package localstack

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// providerReplica is one pod of the provider's Deployment, run as a process.
type providerReplica struct {
	name        string // its log's name; a restart adds to it
	bin         string
	env, args   []string
	watcherAddr string // where its runtime-watcher listener runs
	p           *process
	exited      time.Time
}

// watcherLease is the Lease in which the leading replica publishes its
// runtime-watcher address (internal/provider).
const watcherLease = "provider-eventing-auth-runtime-watcher"

// deployment is the provider's Deployment as its pods: one process, with the
// flags of cluster/install.yaml's runtime config that a process on this
// machine needs; or, with Options.ReplicasAsInstalled, as many as the
// DeploymentRuntimeConfig asks for, with its container's arguments, each
// replica's listener at an address of its own behind the Service stand-in at
// WatcherAddr.
func (r *packageRuntime) deployment(ctx context.Context, rev *unstructured.Unstructured, image, bin, kubeconfig string) ([]*providerReplica, error) {
	drc, err := r.runtimeConfig(ctx, rev, image)
	if err != nil {
		return nil, err
	}
	replicas, podArgs := 1, []string(nil)
	if r.s.o.ReplicasAsInstalled {
		if t := drc.Spec.DeploymentTemplate; t != nil && t.Spec != nil {
			if t.Spec.Replicas != nil {
				replicas = int(*t.Spec.Replicas)
			}
			for _, c := range t.Spec.Template.Spec.Containers {
				if c.Name == "package-runtime" {
					podArgs = c.Args
				}
			}
		}
	}
	env := append(imageEnv(bin), "KUBECONFIG="+kubeconfig)
	var out []*providerReplica
	for i := range replicas {
		rp := &providerReplica{name: "provider-" + rev.GetName(), bin: bin, env: env, watcherAddr: r.s.WatcherAddr}
		if replicas > 1 {
			rp.name += fmt.Sprintf("-%d", i)
			if rp.watcherAddr, err = FreeAddr(); err != nil {
				return nil, err
			}
		}
		rp.args = []string{"--metrics-bind-address=127.0.0.1:0", "--metrics-secure=false", "--health-probe-bind-address=127.0.0.1:0",
			"--runtime-watcher-address=" + rp.watcherAddr, "--runtime-watcher-client-ca=" + r.s.WatcherClientCA}
		for _, a := range podArgs {
			flag, _, _ := strings.Cut(a, "=")
			switch flag {
			case "--runtime-watcher-address", "--runtime-watcher-client-ca":
				// Set above: a loopback address and the stack's CA file.
			case "--runtime-watcher-advertise-address":
				rp.args = append(rp.args, flag+"="+rp.watcherAddr)
			case "--leader-election":
				// A pod finds its namespace in its ServiceAccount's mount.
				rp.args = append(rp.args, a, "--leader-election-namespace="+CrossplaneNamespace)
			default:
				rp.args = append(rp.args, a)
			}
		}
		rp.args = append(rp.args, r.s.o.ProviderArgs...)
		out = append(out, rp)
	}
	if replicas > 1 {
		if err := r.service(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// startReplica starts a replica's process; suffix marks a restart's log.
func (r *packageRuntime) startReplica(rp *providerReplica, suffix string) error {
	p, err := r.s.start(rp.name+suffix, rp.env, rp.bin, rp.args...)
	if err != nil {
		return err
	}
	rp.p = p
	go func() { <-p.done; r.mu.Lock(); rp.exited = time.Now(); r.mu.Unlock() }()
	return nil
}

// leader is the replica whose address the watcher Lease names; nil if none.
func (r *packageRuntime) leader(replicas []*providerReplica) *providerReplica {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l := &coordinationv1.Lease{}
	if err := r.s.Kube.Get(ctx, client.ObjectKey{Namespace: CrossplaneNamespace, Name: watcherLease}, l); err != nil || l.Spec.HolderIdentity == nil {
		return nil
	}
	for _, rp := range replicas {
		if rp.watcherAddr == *l.Spec.HolderIdentity && rp.p.Running() {
			return rp
		}
	}
	return nil
}

// service stands in for the watcher's Service: at WatcherAddr it passes each
// connection to the replicas in turn, skipping one that refuses (a pod that
// is not ready has no endpoint). It serves once; a later revision's replicas
// take the place of the earlier ones.
func (r *packageRuntime) service(replicas []*providerReplica) error {
	r.backends.Store(&replicas)
	if r.serviceStarted {
		return nil
	}
	l, err := net.Listen("tcp", r.s.WatcherAddr)
	if err != nil {
		return err
	}
	r.serviceStarted = true
	r.s.closers = append(r.s.closers, func() { _ = l.Close() })
	var next atomic.Uint64
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close() //nolint:errcheck // Closed either way.
				backends := *r.backends.Load()
				for range backends {
					rp := backends[next.Add(1)%uint64(len(backends))]
					out, err := net.DialTimeout("tcp", rp.watcherAddr, time.Second)
					if err != nil {
						continue
					}
					pipe(in, out)
					return
				}
			}()
		}
	}()
	return nil
}

// pipe copies both ways until either side closes.
func pipe(a, b net.Conn) {
	defer b.Close() //nolint:errcheck // Closed either way.
	var wg sync.WaitGroup
	wg.Add(2)
	for _, p := range [][2]net.Conn{{a, b}, {b, a}} {
		go func() {
			defer wg.Done()
			_, _ = io.Copy(p[0], p[1])
			if c, ok := p[0].(*net.TCPConn); ok {
				_ = c.CloseWrite()
			}
		}()
	}
	wg.Wait()
}

// ProviderReplicas are the processes of the provider's replicas.
func (s *Stack) ProviderReplicas() []*process {
	if s.pkgRuntime == nil {
		return nil
	}
	s.pkgRuntime.mu.Lock()
	defer s.pkgRuntime.mu.Unlock()
	var out []*process
	for _, rp := range s.pkgRuntime.replicas {
		out = append(out, rp.p)
	}
	return out
}

// Kill ends a process at once, as a node that fails ends its pods; the
// package runtime starts it again after a while, as the kubelet would.
func (p *process) Kill() { p.stop() }
