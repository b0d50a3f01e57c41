package kymaruntime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/provider-eventing-auth/test/support/testnet"
)

// TestClientsCloseWhatTimedOut: runtimes whose API servers accept connections
// and never answer keep no connection open once their calls timed out, while
// their clients stay cached; and a client evicted from the cache closes its
// connections.
func TestClientsCloseWhatTimedOut(t *testing.T) {
	hanging := testnet.Hang(t)
	c := NewClients(Options{Size: 10, Timeout: 300 * time.Millisecond})
	const runtimes = 5
	for i := range runtimes {
		kc := strings.Replace(strings.Replace(string(tokenKubeconfig(i)), "api.rt.example:443", hanging.Addr, 1), "tok-", "hang-", 1)
		core, err := c.For([]byte(kc))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Secrets("ns").Get(context.Background(), "s", metav1.GetOptions{}); err == nil {
			t.Fatal("a runtime that never answers answered")
		}
	}
	if n := hanging.Accepted(); n < runtimes {
		t.Fatalf("the hanging server accepted %d connections, want %d", n, runtimes)
	}
	if err := eventually(2*time.Second, func() error {
		if n := hanging.Open(); n != 0 {
			return fmt.Errorf("%d connections to the hanging runtimes still open after their calls timed out", n)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	if s := c.Stats(); s.Len != runtimes {
		t.Errorf("%d clients cached, want %d", s.Len, runtimes)
	}
}

func eventually(d time.Duration, check func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
