package runtimewatcher

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/test/support/skrwebhook"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// countingTargets counts the lookups, which read the provider's cache.
type countingTargets struct {
	targets
	lookups atomic.Int32
}

func (c *countingTargets) Of(ctx context.Context, id string) ([]Target, error) {
	c.lookups.Add(1)
	return c.targets.Of(ctx, id)
}

// TestListenerAuthenticates: with client CAs, only a certificate that chains
// to one of them and is valid now names a runtime; any other is refused with
// 401 before the cache, the runtime's budget or the workqueue is touched, and
// says nothing of which runtimes exist.
func TestListenerAuthenticates(t *testing.T) {
	now := time.Now()
	gateway, err := testcerts.NewCA("klm-watcher CA")
	if err != nil {
		t.Fatal(err)
	}
	forger, err := testcerts.NewCA("klm-watcher CA") // same name, other key
	if err != nil {
		t.Fatal(err)
	}
	issue := func(ca *testcerts.CA, cn string, from, to time.Time) string {
		c, err := ca.Issue(cn, from, to)
		if err != nil {
			t.Fatal(err)
		}
		return skrwebhook.XFCC(c.Cert)
	}
	serverOnly, err := gateway.IssueServerOnly("rt-1", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(gateway.PEM)
	cases := map[string]struct {
		reason  string
		xfcc    string
		code    int
		dropped string
	}{
		"issued by the trusted CA":            {reason: "a certificate of the gateway's CA authenticates its runtime", xfcc: issue(gateway, "rt-1", now.Add(-time.Hour), now.Add(time.Hour)), code: http.StatusOK},
		"forged, a real runtime's ID":         {reason: "a certificate from another CA is refused, even for a runtime that exists", xfcc: issue(forger, "rt-1", now.Add(-time.Hour), now.Add(time.Hour)), code: http.StatusUnauthorized, dropped: DropUntrusted},
		"forged, an unknown runtime's ID":     {reason: "and for one that does not", xfcc: issue(forger, "rt-unknown", now.Add(-time.Hour), now.Add(time.Hour)), code: http.StatusUnauthorized, dropped: DropUntrusted},
		"trusted CA, expired":                 {reason: "an expired certificate is refused", xfcc: issue(gateway, "rt-1", now.Add(-2*time.Hour), now.Add(-time.Hour)), code: http.StatusUnauthorized, dropped: DropUntrusted},
		"trusted CA, not yet valid":           {reason: "so is one not yet valid", xfcc: issue(gateway, "rt-1", now.Add(time.Hour), now.Add(2*time.Hour)), code: http.StatusUnauthorized, dropped: DropUntrusted},
		"no certificate":                      {reason: "no certificate, no caller", code: http.StatusUnauthorized, dropped: DropNoCertificate},
		"trusted CA, no client-auth usage":    {reason: "a certificate not issued for client authentication is refused", xfcc: skrwebhook.XFCC(serverOnly.Cert), code: http.StatusUnauthorized, dropped: DropUntrusted},
		"trusted CA, a runtime not kept here": {reason: "a valid caller for a runtime without a RuntimeSecret has nothing to repair", xfcc: issue(gateway, "rt-unknown", now.Add(-time.Hour), now.Add(time.Hour)), code: http.StatusNotFound, dropped: DropUnknownRuntime},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := NewMetrics(prometheus.NewRegistry())
			tg := &countingTargets{targets: oneRuntime}
			l := New(Options{Metrics: m, ClientCAs: roots, Clock: clocktesting.NewFakeClock(now)}, tg)
			q := &queue{}
			var qi workqueue.TypedRateLimitingInterface[reconcile.Request] = q
			l.queue.Store(&qi)
			r := httptest.NewRequest(http.MethodPost, l.Path(), strings.NewReader(goodBody))
			if tc.xfcc != "" {
				r.Header.Set("X-Forwarded-Client-Cert", tc.xfcc)
			}
			w := httptest.NewRecorder()
			l.ServeHTTP(w, r)
			if w.Code != tc.code {
				t.Fatalf("%s\ncode %d (%s), want %d", tc.reason, w.Code, w.Body.String(), tc.code)
			}
			if tc.dropped != "" {
				if got := testutil.ToFloat64(m.dropped.WithLabelValues(tc.dropped)); got != 1 {
					t.Errorf("%s\ndropped{reason=%q} = %v, want 1", tc.reason, tc.dropped, got)
				}
			}
			if tc.code == http.StatusUnauthorized {
				if n := tg.lookups.Load(); n != 0 || len(q.added) != 0 || l.limiters.Len() != 0 {
					t.Errorf("%s\nrefused, yet %d cache lookups, %d enqueued, %d budgets", tc.reason, n, len(q.added), l.limiters.Len())
				}
				if strings.Contains(w.Body.String(), "rt-") {
					t.Errorf("%s\nthe refusal names a runtime: %s", tc.reason, w.Body.String())
				}
			}
		})
	}
}

// TestListenerCertificateExpiresWhileKnown: a certificate remembered while
// valid is refused once it expired.
func TestListenerCertificateExpiresWhileKnown(t *testing.T) {
	now := time.Now()
	gateway, _ := testcerts.NewCA("klm-watcher CA")
	c, err := gateway.Issue("rt-1", now.Add(-time.Hour), now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(gateway.PEM)
	clock := clocktesting.NewFakeClock(now)
	l := New(Options{ClientCAs: roots, Clock: clock}, oneRuntime)
	q := &queue{}
	var qi workqueue.TypedRateLimitingInterface[reconcile.Request] = q
	l.queue.Store(&qi)
	send := func() int {
		r := httptest.NewRequest(http.MethodPost, l.Path(), strings.NewReader(goodBody))
		r.Header.Set("X-Forwarded-Client-Cert", skrwebhook.XFCC(c.Cert))
		w := httptest.NewRecorder()
		l.ServeHTTP(w, r)
		return w.Code
	}
	var codes []int
	codes = append(codes, send())
	clock.Step(2 * time.Minute)
	codes = append(codes, send())
	if want := []int{http.StatusOK, http.StatusUnauthorized}; !cmp.Equal(want, codes) {
		t.Errorf("codes %v, want %v", codes, want)
	}
}

// TestListenerFollowsTheCAFile: the CA file is read again while the listener
// runs: a certificate of a CA added to it names its runtime from then on, one
// of a CA taken out of it no longer does, even if it was remembered.
func TestListenerFollowsTheCAFile(t *testing.T) {
	cases := map[string]struct {
		reason string
		// beforeStart changes the file after it was loaded and before the
		// listener starts to follow it.
		beforeStart bool
		// missingAtStart: the file does not exist when the provider starts
		// (its Secret not copied yet, mounted optional).
		missingAtStart bool
	}{
		"changed while it runs":    {reason: "a change of the file is followed"},
		"changed before the start": {reason: "a change between loading the file and the start is a change too", beforeStart: true},
		"missing at the start": {reason: "a file missing at the start refuses every event, says so in a gauge, and is trusted once it appears",
			missingAtStart: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { followsTheCAFile(t, tc.reason, tc.beforeStart, tc.missingAtStart) })
	}
}

func followsTheCAFile(t *testing.T, reason string, beforeStart, missingAtStart bool) {
	now := time.Now()
	oldCA, _ := testcerts.NewCA("klm-watcher CA")
	newCA, _ := testcerts.NewCA("klm-watcher CA")
	file := t.TempDir() + "/ca.crt"
	if !missingAtStart {
		if err := os.WriteFile(file, oldCA.PEM, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	roots, missing, err := LoadClientCAs(file)
	if err != nil || missing != missingAtStart {
		t.Fatalf("%s: LoadClientCAs() = missing %t, %v; want missing %t", reason, missing, err, missingAtStart)
	}
	clock := clocktesting.NewFakeClock(now)
	l := New(Options{Addr: "127.0.0.1:0", ClientCAs: roots, ClientCAFile: file, ClientCAMissing: missing, Clock: clock}, oneRuntime)
	if got, want := testutil.ToFloat64(l.o.Metrics.clientCAMissing), map[bool]float64{true: 1, false: 0}[missingAtStart]; got != want {
		t.Errorf("%s: eventing_auth_watcher_client_ca_missing = %v at the start, want %v", reason, got, want)
	}
	q := &queue{}
	var qi workqueue.TypedRateLimitingInterface[reconcile.Request] = q
	l.queue.Store(&qi)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	change := func() {
		if err := os.WriteFile(file, newCA.PEM, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if beforeStart {
		change()
	}
	go func() { _ = l.Start(ctx) }()
	sendCert := func(c *testcerts.Client) int {
		r := httptest.NewRequest(http.MethodPost, l.Path(), strings.NewReader(goodBody))
		r.Header.Set("X-Forwarded-Client-Cert", skrwebhook.XFCC(c.Cert))
		w := httptest.NewRecorder()
		l.ServeHTTP(w, r)
		return w.Code
	}
	send := func(ca *testcerts.CA) int {
		c, err := ca.Issue("rt-1", now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return sendCert(c)
	}
	// The same certificate each time: remembered once it named its runtime.
	old, err := oldCA.Issue("rt-1", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	oldCert := func() int { return sendCert(old) }
	wantBefore := []int{http.StatusOK, http.StatusUnauthorized}
	if missingAtStart {
		wantBefore = []int{http.StatusUnauthorized, http.StatusUnauthorized}
	}
	if got := []int{oldCert(), send(newCA)}; !cmp.Equal(got, wantBefore) {
		t.Fatalf("%s: before the change is read: codes %v, want %v (the old CA's, the new CA's)", reason, got, wantBefore)
	}
	if !beforeStart {
		change()
	}
	deadline := time.Now().Add(10 * time.Second)
	for send(newCA) != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatalf("%s: a certificate of the CA now in the file is still refused", reason)
		}
		clock.Step(clientCAReread)
		time.Sleep(10 * time.Millisecond)
	}
	if got := oldCert(); got != http.StatusUnauthorized {
		t.Errorf("%s: a certificate of the CA taken out of the file: code %d, want 401", reason, got)
	}
	if got := testutil.ToFloat64(l.o.Metrics.clientCAMissing); got != 0 {
		t.Errorf("%s: eventing_auth_watcher_client_ca_missing = %v once the file is read, want 0", reason, got)
	}
}

// TestListenerBudgetOnlyForValidEvents: events for objects a runtime does not
// hold never spend its budget, so a real event after them is taken.
func TestListenerBudgetOnlyForValidEvents(t *testing.T) {
	l := New(Options{Clock: clocktesting.NewFakeClock(time.Now())}, oneRuntime)
	q := &queue{}
	var qi workqueue.TypedRateLimitingInterface[reconcile.Request] = q
	l.queue.Store(&qi)
	rt1 := xfcc(t, "rt-1")
	send := func(body string) int {
		r := httptest.NewRequest(http.MethodPost, l.Path(), strings.NewReader(body))
		r.Header.Set("X-Forwarded-Client-Cert", rt1)
		w := httptest.NewRecorder()
		l.ServeHTTP(w, r)
		return w.Code
	}
	for range 20 {
		if code := send(`{"watched":{"Namespace":"kyma-system","Name":"not-held"},"watchedGvk":{"version":"v1","kind":"Secret"}}`); code != http.StatusUnprocessableEntity {
			t.Fatalf("an event for a Secret the runtime does not hold: %d, want 422", code)
		}
	}
	if code := send(goodBody); code != http.StatusOK {
		t.Errorf("the real event after 20 wrong ones: %d, want 200", code)
	}
}
