package localstack

import (
	"context"
	"os"
	"path/filepath"

	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
	"github.com/kyma-project/provider-eventing-auth/test/support/skrwebhook"
)

// runtimeWatcher starts what carries a change of the runtime's Secret to the
// provider in a landscape: the skr-webhook on the runtime and the gateway
// (skrwebhook's stand-in, registered on the runtime API server), and applies
// cluster/watcher.yaml here, as a landscape does where Lifecycle Manager runs.
// The provider listens at WatcherAddr.
func (s *Stack) runtimeWatcher(ctx context.Context) error {
	addr, err := FreeAddr()
	if err != nil {
		return err
	}
	s.WatcherAddr = addr
	fw, err := skrwebhook.Start("http://"+addr+"/v2/"+runtimewatcher.DefaultComponent+"/event", nil,
		func(string, string) string { return s.runtimeID.Load().(string) }) //nolint:forcetypeassert // Set in Start.
	if err != nil {
		return err
	}
	s.closers = append(s.closers, fw.Close)
	s.Watcher = fw
	// The CA the gateway trusts, as cluster/install.yaml mounts it.
	s.WatcherClientCA = filepath.Join(s.Work, "watcher-client-ca.crt")
	if err := os.WriteFile(s.WatcherClientCA, fw.ClientCA, 0o600); err != nil {
		return err
	}
	if err := fw.Register(ctx, s.RuntimeKube); err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(s.o.Root, "cluster", "watcher.yaml"))
	if err != nil {
		return err
	}
	return s.apply(ctx, string(b))
}
