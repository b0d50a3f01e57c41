package runtimewatcher

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/skrwebhook"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// BenchmarkForgedEvents: the listener's CPU for 2,000 events whose client
// certificates name real runtimes but no trusted CA issued (100 forgers, each
// sending 20), against a bound of half a millisecond each; none is enqueued
// and none reads the cache.
func BenchmarkForgedEvents(b *testing.B) {
	const events, forgers = 2000, 100
	gateway, err := testcerts.NewCA("klm-watcher CA")
	if err != nil {
		b.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(gateway.PEM)
	headers := make([]string, forgers)
	for i := range headers {
		forger, err := testcerts.NewCA("klm-watcher CA")
		if err != nil {
			b.Fatal(err)
		}
		c, err := forger.Issue("rt-1", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil {
			b.Fatal(err)
		}
		headers[i] = skrwebhook.XFCC(c.Cert)
	}
	for range b.N {
		tg := &countingTargets{targets: oneRuntime}
		l := New(Options{ClientCAs: roots, Clock: clock.RealClock{}}, tg)
		q := &queue{}
		var qi workqueue.TypedRateLimitingInterface[reconcile.Request] = q
		l.queue.Store(&qi)
		refused := 0
		before := cpu(b)
		for i := range events {
			r := httptest.NewRequest(http.MethodPost, l.Path(), strings.NewReader(goodBody))
			r.Header.Set("X-Forwarded-Client-Cert", headers[i%forgers])
			w := httptest.NewRecorder()
			l.ServeHTTP(w, r)
			if w.Code == http.StatusUnauthorized {
				refused++
			}
		}
		spent := cpu(b) - before
		if refused != events || len(q.added) != 0 || tg.lookups.Load() != 0 {
			b.Fatalf("%d of %d refused, %d enqueued, %d cache lookups", refused, events, len(q.added), tg.lookups.Load())
		}
		benchfig.Figure("watcher_forged_events_cpu_ms_per_2000", float64(spent.Microseconds())/1000, 1000)
		benchfig.Figure("watcher_forged_events_enqueued", float64(len(q.added)), 0)
	}
}

// cpu is the process's user and system CPU time so far.
func cpu(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
