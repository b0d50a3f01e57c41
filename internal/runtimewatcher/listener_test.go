package runtimewatcher

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/test/support/skrwebhook"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// queue records what is added to it, and when it falls due.
type queue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	mu    sync.Mutex
	added []added
}

// len is how many were added, read while another goroutine may add.
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.added)
}

type added struct {
	req   reconcile.Request
	after time.Duration
}

func (q *queue) AddAfter(r reconcile.Request, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.added = append(q.added, added{r, d})
}

// targets of the test: runtime "rt-1" keeps kyma-system/eventing-webhook-auth
// through RuntimeSecret kcp-system/rt-1.
type targets map[string][]Target

func (t targets) Of(_ context.Context, id string) ([]Target, error) {
	if id == "broken-cache" {
		return nil, errors.New("cache not synced")
	}
	return t[id], nil
}

var (
	rsKey      = types.NamespacedName{Namespace: "kcp-system", Name: "rt-1"}
	secretKey  = types.NamespacedName{Namespace: "kyma-system", Name: "eventing-webhook-auth"}
	oneRuntime = targets{"rt-1": {{RuntimeSecret: rsKey, Secret: secretKey}}}
)

const goodBody = `{"watched":{"Namespace":"kyma-system","Name":"eventing-webhook-auth"},"watchedGvk":{"group":"","version":"v1","kind":"Secret"}}`

func xfcc(t *testing.T, cn string) string {
	t.Helper()
	ca, err := testcerts.NewCA("gateway")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.Issue(cn, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return skrwebhook.XFCC(c.Cert)
}

func TestListener(t *testing.T) {
	rt1, unknown, noCN := xfcc(t, "rt-1"), xfcc(t, "rt-unknown"), xfcc(t, "")
	type request struct {
		method, body, xfcc string
		contentLength      int64
	}
	post := func(body, x string) request { return request{method: http.MethodPost, body: body, xfcc: x} }
	cases := map[string]struct {
		reason   string
		req      request
		code     int
		dropped  string
		enqueued []added
	}{
		"AnEventOfTheRuntimesSecret": {reason: "an event for the runtime's Secret wakes its RuntimeSecret, after the settle", req: post(goodBody, rt1), code: http.StatusOK,
			enqueued: []added{{reconcile.Request{NamespacedName: rsKey}, DefaultSettle}}},
		"NotAPost":             {reason: "the runtime-watcher only posts", req: request{method: http.MethodGet, xfcc: rt1}, code: http.StatusMethodNotAllowed, dropped: DropMethod},
		"DeclaredTooLarge":     {reason: "a body declared too large is refused unread", req: request{method: http.MethodPost, body: goodBody, xfcc: rt1, contentLength: maxBody + 1}, code: http.StatusRequestEntityTooLarge, dropped: DropOversized},
		"TooLarge":             {reason: "a body that turns out too large is refused", req: post(`{"watched":{"Name":"`+strings.Repeat("x", maxBody)+`"}}`, rt1), code: http.StatusRequestEntityTooLarge, dropped: DropOversized},
		"NoCertificateHeader":  {reason: "the caller is authenticated by the certificate the gateway forwards", req: post(goodBody, ""), code: http.StatusUnauthorized, dropped: DropNoCertificate},
		"CertificateNotPEM":    {reason: "a forwarded certificate that does not parse authenticates nobody", req: post(goodBody, `Hash=1;Cert="not-a-certificate";Subject=""`), code: http.StatusUnauthorized, dropped: DropBadCertificate},
		"CertificateWithoutCN": {reason: "a certificate without a common name names no runtime", req: post(goodBody, noCN), code: http.StatusBadRequest, dropped: DropBadCertificate},
		"BodyNotJSON":          {reason: "a body that does not parse is dropped and counted", req: post(`{"watched":`, rt1), code: http.StatusBadRequest, dropped: DropMalformedBody},
		"BodyNamesNoObject":    {reason: "so is one that names no object", req: post(`{"watchedGvk":{"version":"v1","kind":"Secret"}}`, rt1), code: http.StatusBadRequest, dropped: DropMalformedBody},
		"UnknownRuntime":       {reason: "a runtime without a RuntimeSecret has nothing to repair", req: post(goodBody, unknown), code: http.StatusNotFound, dropped: DropUnknownRuntime},
		"NotASecret": {reason: "only the runtime's Secret is the provider's to repair", req: post(`{"watched":{"Namespace":"kyma-system","Name":"eventing-webhook-auth"},"watchedGvk":{"version":"v1","kind":"ConfigMap"}}`, rt1),
			code: http.StatusUnprocessableEntity, dropped: DropWrongObject},
		"AnotherSecret": {reason: "another Secret on the runtime is not the provider's", req: post(`{"watched":{"Namespace":"kyma-system","Name":"other"},"watchedGvk":{"version":"v1","kind":"Secret"}}`, rt1),
			code: http.StatusUnprocessableEntity, dropped: DropWrongObject},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := NewMetrics(reg)
			l := New(Options{Metrics: m, Clock: clocktesting.NewFakeClock(time.Now())}, oneRuntime)
			q := &queue{}
			var qi workqueue.TypedRateLimitingInterface[reconcile.Request] = q
			l.queue.Store(&qi)

			r := httptest.NewRequest(tc.req.method, l.Path(), strings.NewReader(tc.req.body))
			if tc.req.xfcc != "" {
				r.Header.Set("X-Forwarded-Client-Cert", tc.req.xfcc)
			}
			if tc.req.contentLength != 0 {
				r.ContentLength = tc.req.contentLength
			}
			w := httptest.NewRecorder()
			l.ServeHTTP(w, r)

			if w.Code != tc.code {
				t.Errorf("%s\ncode: want %d, got %d (%s)", tc.reason, tc.code, w.Code, w.Body.String())
			}
			if diff := cmp.Diff(tc.enqueued, q.added, cmp.AllowUnexported(added{})); diff != "" {
				t.Errorf("%s\nenqueued: -want, +got:\n%s", tc.reason, diff)
			}
			if got := testutil.ToFloat64(m.received); got != 1 {
				t.Errorf("%s\nreceived: want 1, got %v", tc.reason, got)
			}
			for _, reason := range []string{DropMethod, DropOversized, DropNoCertificate, DropBadCertificate, DropUntrusted, DropMalformedBody, DropUnknownRuntime, DropWrongObject, DropFlood} {
				want := 0.0
				if reason == tc.dropped {
					want = 1
				}
				if got := testutil.ToFloat64(m.dropped.WithLabelValues(reason)); got != want {
					t.Errorf("%s\ndropped{reason=%q}: want %v, got %v", tc.reason, reason, want, got)
				}
			}
		})
	}
}

// TestListenerFlood: a runtime past its budget is refused with 429, and the
// others are not.
func TestListenerFlood(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	clock := clocktesting.NewFakeClock(time.Now())
	two := targets{"rt-1": oneRuntime["rt-1"], "rt-2": {{RuntimeSecret: types.NamespacedName{Namespace: "kcp-system", Name: "rt-2"}, Secret: secretKey}}}
	l := New(Options{Metrics: m, Clock: clock}, two)
	q := &queue{}
	var qi workqueue.TypedRateLimitingInterface[reconcile.Request] = q
	l.queue.Store(&qi)
	send := func(x string) int {
		r := httptest.NewRequest(http.MethodPost, l.Path(), strings.NewReader(goodBody))
		r.Header.Set("X-Forwarded-Client-Cert", x)
		w := httptest.NewRecorder()
		l.ServeHTTP(w, r)
		return w.Code
	}
	rt1, rt2 := xfcc(t, "rt-1"), xfcc(t, "rt-2")
	codes := map[int]int{}
	for range 50 {
		codes[send(rt1)]++
	}
	if want := map[int]int{http.StatusOK: DefaultBurst, http.StatusTooManyRequests: 50 - DefaultBurst}; !cmp.Equal(want, codes) {
		t.Errorf("50 events at once from one runtime: want %v, got %v", want, codes)
	}
	if got := send(rt2); got != http.StatusOK {
		t.Errorf("another runtime's event during the flood: want 200, got %d", got)
	}
	if got := testutil.ToFloat64(m.dropped.WithLabelValues(DropFlood)); got != 50-DefaultBurst {
		t.Errorf("dropped{reason=flood}: want %d, got %v", 50-DefaultBurst, got)
	}
	// The budgets of runtimes quiet for a minute are forgotten: they do not
	// grow with every runtime that ever sent an event.
	clock.Step(2 * time.Minute)
	if got := send(rt2); got != http.StatusOK {
		t.Errorf("after a quiet minute: want 200, got %d", got)
	}
	if n := l.limiters.Len(); n != 1 {
		t.Errorf("event budgets kept: %d, want 1 (the runtime heard from since)", n)
	}
}

// TestListenerFight: once a runtime's Secret is in a fight, the repair its
// event brings waits, growing with each change; another runtime's does not.
func TestListenerFight(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	l := New(Options{Clock: clock, PerRuntime: 1000, Burst: 1000}, oneRuntime)
	q := &queue{}
	var qi workqueue.TypedRateLimitingInterface[reconcile.Request] = q
	l.queue.Store(&qi)
	rt1 := xfcc(t, "rt-1")
	send := func() time.Duration {
		r := httptest.NewRequest(http.MethodPost, l.Path(), strings.NewReader(goodBody))
		r.Header.Set("X-Forwarded-Client-Cert", rt1)
		l.ServeHTTP(httptest.NewRecorder(), r)
		return q.added[len(q.added)-1].after
	}
	other := types.NamespacedName{Namespace: "kcp-system", Name: "rt-2"}
	var waits []time.Duration
	var started []int
	for i := range 6 {
		send()
		if !l.TookEvent(rsKey) {
			t.Errorf("change %d: the event was not taken as what brought the repair", i+1)
		}
		f := l.Repairing(rsKey, true)
		if f.Started {
			started = append(started, f.Changes)
		}
		waits = append(waits, f.Wait)
		// The next event, right after this repair, waits for the fight.
		if got := send(); got != DefaultSettle+f.Wait {
			t.Errorf("event right after change %d: waits %s, want %s", i+1, got, DefaultSettle+f.Wait)
		}
		l.TookEvent(rsKey)
		clock.Step(f.Wait + 10*time.Second)
	}
	if want := []time.Duration{0, 0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}; !cmp.Equal(want, waits) {
		t.Errorf("waits: want %v, got %v", want, waits)
	}
	if !cmp.Equal([]int{FightAfter}, started) {
		t.Errorf("fight started at changes %v, want [%d]", started, FightAfter)
	}
	if f := l.Repairing(other, false); f.Wait != 0 {
		t.Errorf("another runtime's first change waits %s", f.Wait)
	}
	// Quiet for twice the last wait and the window: the fight is over.
	clock.Step(2*FightWindow + 16*time.Second)
	if f := l.Repairing(rsKey, true); f.Changes != 1 || f.Wait != 0 {
		t.Errorf("after a quiet spell: want a first change without a wait, got %+v", f)
	}
	if l.TookEvent(rsKey) {
		t.Error("an event taken twice")
	}
}

// TestListenerEchoes: the event of the provider's own write, which the
// skr-webhook posts while that write is in flight, brings no reconcile; any
// other event does, one during the write too.
func TestListenerEchoes(t *testing.T) {
	rt1 := xfcc(t, "rt-1")
	type step int
	const (
		startWrite step = iota
		writeReturned
		event
	)
	cases := map[string]struct {
		reason   string
		steps    []step
		enqueued int
		echoes   float64
	}{
		"TheEchoDuringTheWrite":            {reason: "the event of the provider's own write wakes nothing: it is an echo", steps: []step{startWrite, event, writeReturned}, enqueued: 0, echoes: 1},
		"AnotherChangeBesideTheEcho":       {reason: "one echo per write: a second event during it is someone else's change", steps: []step{startWrite, event, event, writeReturned}, enqueued: 1, echoes: 1},
		"AnEventAfterTheWriteReturned":     {reason: "an event after the write returned is a change", steps: []step{startWrite, writeReturned, event}, enqueued: 1},
		"AnEventWithoutAWrite":             {reason: "so is any event without a write", steps: []step{event}, enqueued: 1},
		"TheNextWriteAwaitsItsOwnEchoOnly": {reason: "each write takes only its own echo", steps: []step{startWrite, event, writeReturned, startWrite, event, event, writeReturned}, enqueued: 1, echoes: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := NewMetrics(prometheus.NewRegistry())
			l := New(Options{Metrics: m}, oneRuntime)
			q := &queue{}
			var qi workqueue.TypedRateLimitingInterface[reconcile.Request] = q
			l.queue.Store(&qi)
			var returned []func(bool)
			for _, s := range tc.steps {
				switch s {
				case startWrite:
					returned = append(returned, l.OwnWrite(rsKey))
				case writeReturned:
					returned[0](true)
					returned = returned[1:]
				case event:
					r := httptest.NewRequest(http.MethodPost, l.Path(), strings.NewReader(goodBody))
					r.Header.Set("X-Forwarded-Client-Cert", rt1)
					w := httptest.NewRecorder()
					l.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						t.Fatalf("%s\nevent answered %d, want 200", tc.reason, w.Code)
					}
				}
			}
			if len(q.added) != tc.enqueued {
				t.Errorf("%s\nreconciles enqueued: %d, want %d", tc.reason, len(q.added), tc.enqueued)
			}
			if got := testutil.ToFloat64(m.echoes); got != tc.echoes {
				t.Errorf("%s\nechoes counted: %v, want %v", tc.reason, got, tc.echoes)
			}
			if len(l.echoes.inFlight)+len(l.echoes.awaited) != 0 {
				t.Errorf("%s\nwrites still remembered after they returned: %v, %v", tc.reason, l.echoes.inFlight, l.echoes.awaited)
			}
		})
	}
}
