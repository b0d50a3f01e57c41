package runtimewatcher

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/test/support/skrwebhook"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// leaderAt is a LeaderAddress that says addr.
type leaderAt struct {
	mu   sync.Mutex
	addr string
}

func (l *leaderAt) Get(context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.addr, nil
}
func (l *leaderAt) Set(_ context.Context, a string) error { l.set(a); return nil }

func (l *leaderAt) set(a string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addr = a
}

// TestRelay: a standby hands an authenticated event to the leader, which
// enqueues it; with no leader to reach it holds the event and replays it into
// its own controller once it leads; it never holds a forged one, and never
// hands on what another replica handed to it.
func TestRelay(t *testing.T) {
	now := time.Now()
	gateway, _ := testcerts.NewCA("klm-watcher CA")
	forger, _ := testcerts.NewCA("klm-watcher CA")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(gateway.PEM)
	issue := func(ca *testcerts.CA) string {
		c, err := ca.Issue("rt-1", now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return skrwebhook.XFCC(c.Cert)
	}
	real, forged := issue(gateway), issue(forger)
	key := []byte("the replicas' shared key")

	newReplica := func(leader LeaderAddress, advertise string) (*Listener, *Metrics) {
		m := NewMetrics(prometheus.NewRegistry())
		return New(Options{Metrics: m, ClientCAs: roots, Clock: clocktesting.NewFakeClock(now), Leader: leader, Advertise: advertise, RelayKey: key}, oneRuntime), m
	}
	lead := func(l *Listener) *queue {
		q := &queue{}
		if err := l.Source().Start(context.Background(), workqueue.TypedRateLimitingInterface[reconcile.Request](q)); err != nil {
			t.Fatal(err)
		}
		return q
	}
	// signed: the key a relay is signed with; nil: none is.
	postSigned := func(l *Listener, xfcc string, handedOn bool, signed []byte) int {
		r := httptest.NewRequest(http.MethodPost, l.Path(), strings.NewReader(goodBody))
		r.Header.Set("X-Forwarded-Client-Cert", xfcc)
		if handedOn {
			r.Header.Set(headerRelayed, "other")
			if signed != nil {
				r.Header.Set(headerRelaySignature, relaySignature(signed, "other", xfcc, []byte(goodBody)))
			}
		}
		w := httptest.NewRecorder()
		l.ServeHTTP(w, r)
		return w.Code
	}
	post := func(l *Listener, xfcc string, handedOn bool) int { return postSigned(l, xfcc, handedOn, key) }

	t.Run("forwarded to the leader", func(t *testing.T) {
		addr := &leaderAt{}
		leader, _ := newReplica(addr, "")
		lq := lead(leader)
		srv := httptest.NewServer(leader)
		defer srv.Close()
		addr.addr = strings.TrimPrefix(srv.URL, "http://")
		standby, m := newReplica(addr, "standby:8082")
		if code := post(standby, real, false); code != http.StatusOK {
			t.Fatalf("standby answered %d, want the leader's 200", code)
		}
		if len(lq.added) != 1 || lq.added[0].req.NamespacedName != rsKey {
			t.Errorf("the leader enqueued %v, want %s", lq.added, rsKey)
		}
		if got := testutil.ToFloat64(m.handed.WithLabelValues(HandedForwarded)); got != 1 {
			t.Errorf("forwarded %v, want 1", got)
		}
		if code := post(standby, forged, false); code != http.StatusUnauthorized || len(lq.added) != 1 {
			t.Errorf("forged event: standby answered %d, leader enqueued %d; want 401 and nothing", code, len(lq.added))
		}
	})
	t.Run("held while no leader answers, replayed on leading", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		addr := &leaderAt{addr: strings.TrimPrefix(dead.URL, "http://")}
		dead.Close()
		standby, m := newReplica(addr, "standby:8082")
		if code := post(standby, real, false); code != http.StatusOK {
			t.Fatalf("standby answered %d, want 200 (held)", code)
		}
		if code := post(standby, forged, false); code != http.StatusUnauthorized {
			t.Errorf("forged event: %d, want 401", code)
		}
		if code := post(standby, real, true); code != http.StatusOK {
			t.Errorf("an event relayed already: %d, want 200 (held, not relayed again)", code)
		}
		q := lead(standby)
		if len(q.added) != 2 || q.added[0].req.NamespacedName != rsKey {
			t.Errorf("replayed %v, want the two held events of %s", q.added, rsKey)
		}
		if addr.addr != "standby:8082" {
			t.Errorf("published %q, want the new leader's address", addr.addr)
		}
		if got := testutil.ToFloat64(m.handed.WithLabelValues(HandedReplayed)); got != 2 {
			t.Errorf("replayed %v, want 2", got)
		}
	})
	t.Run("held, then handed to the replica that leads next", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		addr := &leaderAt{addr: strings.TrimPrefix(dead.URL, "http://")}
		dead.Close()
		standby := New(Options{Addr: "127.0.0.1:0", ClientCAs: roots, Clock: clocktesting.NewFakeClock(now), Leader: addr, Advertise: "standby:8082", RelayKey: key}, oneRuntime)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { _ = standby.Start(ctx) }()
		if code := post(standby, real, false); code != http.StatusOK {
			t.Fatalf("standby answered %d, want 200 (held)", code)
		}
		next, _ := newReplica(addr, "")
		lq := lead(next)
		srv := httptest.NewServer(next)
		defer srv.Close()
		reachable := time.Now()
		addr.set(strings.TrimPrefix(srv.URL, "http://"))
		for lq.len() == 0 {
			if time.Since(reachable) > 2*time.Second {
				t.Fatal("the held event did not reach the new leader within 2 s of it being reachable")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("a relay from outside the replicas", func(t *testing.T) {
		for name, signed := range map[string][]byte{"unsigned": nil, "signed with another key": []byte("a guess")} {
			l, m := newReplica(&leaderAt{}, "standby:8082")
			if code := postSigned(l, real, true, signed); code != http.StatusUnauthorized {
				t.Errorf("%s: a standby answered %d, want 401", name, code)
			}
			lq := lead(l)
			if code := postSigned(l, real, true, signed); code != http.StatusUnauthorized || len(lq.added) != 0 {
				t.Errorf("%s: the leader answered %d and enqueued %d, want 401 and nothing", name, code, len(lq.added))
			}
			if got := testutil.ToFloat64(m.dropped.WithLabelValues(DropForgedRelay)); got != 2 {
				t.Errorf("%s: dropped{reason=forged_relay} = %v, want 2", name, got)
			}
		}
	})
	t.Run("its own address from before a restart", func(t *testing.T) {
		standby, _ := newReplica(&leaderAt{addr: "standby:8082"}, "standby:8082")
		if code := post(standby, real, false); code != http.StatusOK {
			t.Errorf("answered %d, want 200 (held, not sent to itself)", code)
		}
	})
}
