package integration

import (
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
	"github.com/kyma-project/provider-eventing-auth/test/support/skrwebhook"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// testRuntimeWatcherRepairs: the runtime API server's webhook (the
// runtime-watcher's stand-in) reports a deleted and an edited Secret, and
// each is put back by the event it brings, not by a poll; the echo of each
// repair is taken without another repair, and without a reconcile.
func testRuntimeWatcherRepairs(t *testing.T) {
	g := NewWithT(t)
	const id = "rt-watched"
	ns, _, data := readyRuntimeSecret(t, rtEnv, rt, id)
	g.Eventually(watcher.Addr, timeout, 100*time.Millisecond).ShouldNot(BeEmpty())
	fw := forwardEvents(t, ns, id)

	repairs := func(trigger string) float64 {
		return scrape(g)[`eventing_auth_runtime_secret_repairs_total{trigger="`+trigger+`"}`]
	}
	echoes0 := scrape(g)["eventing_auth_watcher_echoes_total{}"]
	for _, change := range []string{"deleted", "edited"} {
		before := repairs(runtimewatcher.TriggerEvent)
		s := onRuntime(g, rt, ns, "eventing-webhook-auth")
		if change == "deleted" {
			g.Expect(rt.Delete(ctx, s)).To(Succeed())
		} else {
			s.Data["client_secret"] = []byte("edited")
			g.Expect(rt.Update(ctx, s)).To(Succeed())
		}
		g.Eventually(func(g Gomega) {
			g.Expect(onRuntime(g, rt, ns, "eventing-webhook-auth").Data).To(Equal(data))
		}, poll, 50*time.Millisecond).Should(Succeed(), "the %s Secret is put back within a poll", change)
		g.Eventually(func() float64 { return repairs(runtimewatcher.TriggerEvent) }, time.Second, 50*time.Millisecond).
			Should(Equal(before+1), "the %s Secret was put back by the event", change)
	}
	// The repairs' echoes came back and were taken, and nothing was refused.
	g.Expect(fw.Sent.Load()).To(BeNumerically(">=", 4))
	g.Expect(fw.Refused.Load()).To(BeZero())
	g.Consistently(func() float64 { return repairs(runtimewatcher.TriggerEvent) + repairs(runtimewatcher.TriggerPoll) }, 2*poll, 200*time.Millisecond).
		Should(Equal(repairs(runtimewatcher.TriggerEvent)+repairs(runtimewatcher.TriggerPoll)), "an echo was taken for a change")
	// Each repair's echo arrived while its write was in flight (the webhook
	// waits for the listener), so it brought no reconcile.
	g.Expect(scrape(g)["eventing_auth_watcher_echoes_total{}"]-echoes0).To(Equal(2.0), "echoes taken without a reconcile")
}

// forwardEvents puts the runtime-watcher's stand-in on the shared runtime,
// reporting the Secrets of namespace ns as runtime id's with a certificate of
// the CA the provider trusts.
func forwardEvents(t *testing.T, ns, id string) *skrwebhook.Forwarder {
	t.Helper()
	g := NewWithT(t)
	fw, err := skrwebhook.Start("http://"+watcher.Addr()+watcher.Path(), watcherCA, func(namespace, _ string) string {
		if namespace == ns {
			return id
		}
		return ""
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(fw.Close)
	g.Expect(fw.Register(ctx, rt)).To(Succeed())
	t.Cleanup(func() { _ = fw.Deregister(ctx, rt) })
	return fw
}

// testRuntimeWatcherRefusesForgedCertificates: an event sent straight to the
// listener with a certificate that no trusted CA issued, naming a real
// runtime and the Secret it holds, is refused with 401 and brings no
// reconcile, however many come; the runtime's own events still repair.
func testRuntimeWatcherRefusesForgedCertificates(t *testing.T) {
	g := NewWithT(t)
	const id = "rt-forged"
	ns, rs, data := readyRuntimeSecret(t, rtEnv, rt, id)
	g.Eventually(watcher.Addr, timeout, 100*time.Millisecond).ShouldNot(BeEmpty())
	forger, err := testcerts.NewCA("klm-watcher CA")
	g.Expect(err).NotTo(HaveOccurred())
	forged, err := forger.Issue(id, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	// The trusted CA's, for a server: no client-auth usage.
	serverOnly, err := watcherCA.IssueServerOnly(id, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	// The runtime's own, but sent as if another replica handed it on.
	genuine, err := watcherCA.Issue(id, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	body := `{"watched":{"namespace":"kyma-system","name":"eventing-webhook-auth"},"watchedGvk":{"group":"","version":"v1","kind":"Secret"}}`
	repairs := func(trigger string) float64 {
		return scrape(g)[`eventing_auth_runtime_secret_repairs_total{trigger="`+trigger+`"}`]
	}
	byEvent, byPoll := repairs(runtimewatcher.TriggerEvent), repairs(runtimewatcher.TriggerPoll)
	dropped := func() (untrusted, relay float64) {
		m := scrape(g)
		return m[`eventing_auth_watcher_events_dropped_total{reason="untrusted_certificate"}`], m[`eventing_auth_watcher_events_dropped_total{reason="forged_relay"}`]
	}
	untrusted, relay := dropped()
	// The Secret is deleted with no webhook on the runtime: only a poll, or
	// an event taken, puts it back.
	g.Expect(rt.Delete(ctx, onRuntime(g, rt, ns, "eventing-webhook-auth"))).To(Succeed())
	for i := range 30 {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+watcher.Addr()+watcher.Path(), strings.NewReader(body))
		g.Expect(err).NotTo(HaveOccurred())
		switch i % 3 {
		case 0:
			req.Header.Set("X-Forwarded-Client-Cert", skrwebhook.XFCC(forged.Cert))
		case 1:
			req.Header.Set("X-Forwarded-Client-Cert", skrwebhook.XFCC(serverOnly.Cert))
		case 2:
			req.Header.Set("X-Forwarded-Client-Cert", skrwebhook.XFCC(genuine.Cert))
			req.Header.Set("X-Eventing-Auth-Relayed", "10.0.0.7:8082")
		}
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
	}
	nowUntrusted, nowRelay := dropped()
	g.Expect(nowUntrusted - untrusted).To(Equal(20.0))
	g.Expect(nowRelay - relay).To(Equal(10.0))
	g.Eventually(func(g Gomega) {
		g.Expect(onRuntime(g, rt, ns, "eventing-webhook-auth").Data).To(Equal(data))
	}, 2*poll, 50*time.Millisecond).Should(Succeed(), "the Secret is put back by a poll")
	g.Eventually(func() float64 { return repairs(runtimewatcher.TriggerPoll) }, time.Second, 50*time.Millisecond).Should(Equal(byPoll + 1))
	g.Expect(repairs(runtimewatcher.TriggerEvent)).To(Equal(byEvent), "a forged event brought a repair")

	// The runtime's own event, through the gateway, still repairs at once.
	forwardEvents(t, ns, id)
	g.Expect(rt.Delete(ctx, onRuntime(g, rt, ns, "eventing-webhook-auth"))).To(Succeed())
	byEvent = repairs(runtimewatcher.TriggerEvent)
	g.Eventually(func(g Gomega) {
		g.Expect(onRuntime(g, rt, ns, "eventing-webhook-auth").Data).To(Equal(data))
	}, poll, 50*time.Millisecond).Should(Succeed(), "the Secret is put back within a poll")
	g.Eventually(func() float64 { return repairs(runtimewatcher.TriggerEvent) }, time.Second, 50*time.Millisecond).Should(Equal(byEvent+1), "put back by the runtime's event")
	waitReady(t, rs)
}
