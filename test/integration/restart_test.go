package integration

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/testnet"
)

// testRestartBesideUnreachableRuntimes: runtimes that hang or refuse, whose
// RuntimeSecrets named the cause and a next try, are not called by a
// restarted provider before that next try, and their RuntimeSecrets keep
// saying what they said, unwritten; a new runtime beside them gets its Secret.
// Without the conditions recalled, the restarted provider would open a
// connection to every hanging runtime at once. A connection to a hanging
// runtime is closed once its connect timeout passes: hanging runtimes pin no
// sockets, before the restart or after.
func testRestartBesideUnreachableRuntimes(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	newRuntimeNamespace(t, rt, ns)
	putCredentials(t, ns, "creds", "restart-client-secret-value")
	// First, so that the restart follows the failures below at once: a
	// namespace's ProviderConfig with the platform's username and a wrong
	// password, which after the restart must not be the first logon tried,
	// nor hold the platform's.
	platform := newTenant(t, newNamespace(t), iassim.Options{})
	_, onPlatform := platformConfig(t, platform)
	before := onPlatform("runtime-platform-before-restart")
	g.Expect(k8s.Create(ctx, before)).To(Succeed())
	waitReady(t, before)
	guesser := sameTenant(t, platform, newNamespace(t), "guessed-"+platform.password, nil)
	guess := guesser.app("runtime-guess")
	g.Expect(k8s.Create(ctx, guess)).To(Succeed())
	expectSyncedFalse(t, guess, "may not log on as a platform user")
	hanging, refusing := testnet.Hang(t), testnet.RefusingAddr(t)
	var dead []*runtimev1alpha1.RuntimeSecret
	for i := range 6 {
		id := fmt.Sprintf("rt-dead-%d", i)
		putKubeconfig(t, ns, id, newKubeconfig(t, rtEnv, id))
		addr := hanging.Addr
		if i%2 == 1 {
			addr = refusing
		}
		pointAt(t, ns, id, "https://"+addr)
		rs := runtimeSecret(ns, id, id, "creds")
		g.Expect(k8s.Create(ctx, rs)).To(Succeed())
		dead = append(dead, rs)
	}
	// Each names its cause with a next try 10s or more ahead: its circuit
	// opened a few times, each time for longer.
	var earliest time.Time
	g.Eventually(func(g Gomega) {
		earliest = time.Time{}
		for _, rs := range dead {
			get(g, rs)
			f, ok := reconciler.RecalledFailure(rs)
			g.Expect(ok).To(BeTrue(), "%s: %s", rs.Name, rs.GetCondition("Synced").Message)
			g.Expect(time.Until(f.Next)).To(BeNumerically(">=", 10*time.Second), "%s", rs.Name)
			if earliest.IsZero() || f.Next.Before(earliest) {
				earliest = f.Next
			}
		}
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Eventually(hanging.Open, 10*time.Second, 100*time.Millisecond).Should(BeZero(), "connections to the hanging runtimes left open after their calls timed out")
	held := settings().RuntimeConnectTimeout + time.Second
	g.Expect(hanging.Longest()).To(BeNumerically("<", held), "a connection to a hanging runtime outlived the connect timeout")
	versions := map[string]string{}
	for _, rs := range dead {
		versions[rs.Name] = rs.ResourceVersion
	}
	accepted := hanging.Accepted()

	restartProvider(t)
	g.Expect(time.Until(earliest)).To(BeNumerically(">", 3*time.Second), "the restart left time before the earliest next try")
	// A new runtime beside them, right after the restart.
	start := time.Now()
	fresh := runtimeSecret(ns, "rt-after-restart", "rt-after-restart", "creds")
	putKubeconfig(t, ns, fresh.Name, newKubeconfig(t, rtEnv, fresh.Name))
	g.Expect(k8s.Create(ctx, fresh)).To(Succeed())
	var ready time.Duration
	// Until the earliest next try, nothing is called and nothing is written.
	g.Consistently(func(g Gomega) {
		g.Expect(hanging.Accepted()).To(Equal(accepted), "connections to the hanging runtimes")
		g.Expect(hanging.Open()).To(BeZero(), "connections to the hanging runtimes left open across the restart")
		for _, rs := range dead {
			get(g, rs)
			g.Expect(rs.ResourceVersion).To(Equal(versions[rs.Name]), "%s was written: %s", rs.Name, rs.GetCondition("Synced").Message)
		}
		if ready == 0 && get(g, fresh).(*runtimev1alpha1.RuntimeSecret).GetCondition("Ready").Status == "True" {
			ready = time.Since(start)
		}
	}, time.Until(earliest.Add(-time.Second)), 200*time.Millisecond).Should(Succeed())
	waitReady(t, fresh)
	if ready == 0 {
		ready = time.Since(start)
	}
	g.Expect(ready).To(BeNumerically("<", 5*time.Second), "a new runtime beside them got its Secret")
	t.Logf("restart beside 3 hanging and 3 refusing runtimes: new runtime Ready after %s; no call to them for %s", ready.Round(100*time.Millisecond), time.Since(start).Round(time.Second))
	// After it, they are tried again and still name their cause.
	for _, rs := range dead {
		expectSyncedFalse(t, rs, "next try at")
	}
	g.Eventually(hanging.Accepted, 2*time.Minute, 200*time.Millisecond).Should(BeNumerically(">", accepted), "the hanging runtimes are probed after their next try")
	g.Eventually(hanging.Open, 30*time.Second, 100*time.Millisecond).Should(BeZero(), "connections of the restarted provider's probes left open after they timed out")
	g.Expect(hanging.Longest()).To(BeNumerically("<", held), "a connection to a hanging runtime outlived the connect timeout")

	after := onPlatform("runtime-platform-after-restart")
	g.Expect(k8s.Create(ctx, after)).To(Succeed())
	// Within the backoff a rejected password would hold the platform's for,
	// with room for a restarted provider's first pass over every resource.
	waitReadyWithin(t, after, rejectedBackoff-5*time.Second)
	waitReady(t, before)
	g.Expect(failedLogons(platform.sim)).To(BeZero(), "failed logons of the platform's user across the restart")
}
