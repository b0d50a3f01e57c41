package kymaruntime

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

// caData is a real CA certificate, base64 as in a kubeconfig.
var caData = func() string {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}()

func tokenKubeconfig(i int) []byte {
	k := kubeconfig("", fmt.Sprintf("    token: tok-%d", i))
	return []byte(strings.Replace(k, "Q0EtREFUQS1TRUNSRVQ=", caData, 1))
}

// TestClientsCountBuildsAndEvictions: what the metrics report. (The cache's
// bound itself is k8s.io/utils/lru's.)
func TestClientsCountBuildsAndEvictions(t *testing.T) {
	c := NewClients(Options{Size: 3})
	for i := range 10 {
		if _, err := c.For(tokenKubeconfig(i)); err != nil {
			t.Fatal(err)
		}
	}
	if s := c.Stats(); s.Built != 10 || s.Evicted != 7 {
		t.Fatalf("stats %+v, want built 10, evicted 7", s)
	}
}

// TestClientsConcurrentEvictions: many reconciles building clients at once
// while the cache evicts never block each other (the eviction runs under the
// LRU's lock).
func TestClientsConcurrentEvictions(t *testing.T) {
	c := NewClients(Options{Size: 2})
	configs := make([][]byte, 64)
	for i := range configs {
		configs[i] = tokenKubeconfig(i)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := range 200 {
					if _, err := c.For(configs[(i*7+w)%len(configs)]); err != nil {
						t.Error(err)
						return
					}
					_ = c.Stats()
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("concurrent client builds with evictions did not finish: deadlock")
	}
	// Two reconciles that miss at once both build; the second replaces the first.
	if s := c.Stats(); s.Len != 2 || s.Peak != 2 || s.Built < s.Evicted+2 {
		t.Errorf("stats %+v, want 2 held and no more evicted than built", s)
	}
}

func TestClientsReuseByDigest(t *testing.T) {
	c := NewClients(Options{Size: 2})
	a, err := c.For(tokenKubeconfig(1))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.For(tokenKubeconfig(1))
	if a != again {
		t.Error("the same kubeconfig built a second client")
	}
	changed, _ := c.For(tokenKubeconfig(2))
	if changed == a {
		t.Error("a changed kubeconfig reused the old client")
	}
	if s := c.Stats(); s.Built != 2 {
		t.Errorf("built %d clients, want 2", s.Built)
	}
}

// runtimeServer is a runtime API server over TLS that answers every request
// with a Secret and records whether each request's connection resumed a TLS
// session; kubeconfig points at it with the given token.
type runtimeServer struct {
	*httptest.Server
	mu      sync.Mutex
	resumed []bool
	// media are the Content-Type and Accept of each request.
	media  [][2]string
	closed atomic.Int32 // connections closed
}

func newRuntimeServer(t testing.TB) *runtimeServer {
	t.Helper()
	rs := &runtimeServer{}
	rs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.resumed = append(rs.resumed, r.TLS.DidResume)
		rs.media = append(rs.media, [2]string{r.Header.Get("Content-Type"), r.Header.Get("Accept")})
		rs.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","namespace":"ns"}}`))
	}))
	rs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			rs.closed.Add(1)
		}
	}
	rs.StartTLS()
	t.Cleanup(rs.Close)
	return rs
}

func (rs *runtimeServer) kubeconfig(token string) []byte {
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rs.Certificate().Raw}))
	return []byte(strings.Replace(strings.Replace(kubeconfig("", "    token: "+token), "Q0EtREFUQS1TRUNSRVQ=", ca, 1), "https://api.rt.example:443", rs.URL, 1))
}

// resumedPerRequest tells, per request so far, whether its connection resumed
// a TLS session.
func (rs *runtimeServer) resumedPerRequest() []bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.resumed)
}

// TestClientsCloseIdleConnections: a cached client does not keep its runtime
// connection open between polls.
func TestClientsCloseIdleConnections(t *testing.T) {
	srv := newRuntimeServer(t)
	c := NewClients(Options{Size: 2, IdleTimeout: 100 * time.Millisecond})
	core, err := c.For(srv.kubeconfig("t"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Secrets("ns").Get(context.Background(), "s", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for srv.closed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if srv.closed.Load() == 0 {
		t.Fatal("the idle connection to the runtime is still open while its client stays cached")
	}
	if s := c.Stats(); s.Len != 1 {
		t.Errorf("the client left the cache: %+v", s)
	}
	// The next reconcile connects again, resuming the TLS session: the
	// runtime's certificate chain is not verified again.
	if _, err := core.Secrets("ns").Get(context.Background(), "s", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if resumed := srv.resumedPerRequest(); !slices.Equal(resumed, []bool{false, true}) {
		t.Errorf("TLS sessions resumed per request = %v, want [false true]", resumed)
	}
}

// TestClientsResumeSessionsAfterEviction: a runtime whose client was evicted
// resumes its TLS session with the client built again, and a session is
// resumed only with the kubeconfig that made it, even on the same server.
func TestClientsResumeSessionsAfterEviction(t *testing.T) {
	srv := newRuntimeServer(t)
	kc := srv.kubeconfig
	c := NewClients(Options{Size: 1})
	get := func(kubeconfig []byte) {
		t.Helper()
		core, err := c.For(kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Secrets("ns").Get(context.Background(), "s", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	get(kc("a")) // a new session
	get(kc("b")) // evicts a's client; b's credentials never resume a's session
	get(kc("a")) // a's client built again resumes a's session
	if s := c.Stats(); s.Built != 3 || s.Evicted != 2 {
		t.Fatalf("cache %+v, want 3 clients built and 2 evicted", s)
	}
	if want, resumed := []bool{false, false, true}, srv.resumedPerRequest(); !slices.Equal(resumed, want) {
		t.Errorf("TLS sessions resumed per request = %v, want %v", resumed, want)
	}
}

// TestClientsSpeakProtobuf: a runtime's Secrets are sent and asked for in
// protobuf, and an answer in JSON is still read.
func TestClientsSpeakProtobuf(t *testing.T) {
	srv := newRuntimeServer(t)
	core, err := NewClients(Options{Size: 1}).For(srv.kubeconfig("t"))
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}}
	if got, err := core.Secrets("ns").Create(context.Background(), s, metav1.CreateOptions{}); err != nil || got.Name != "s" {
		t.Fatalf("Create: %v, %v; want the JSON answer read", got, err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if want := [2]string{"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf,application/json"}; len(srv.media) != 1 || srv.media[0] != want {
		t.Errorf("Content-Type and Accept per request = %v, want [%v]", srv.media, want)
	}
}

func TestClientsRefuseWithoutCaching(t *testing.T) {
	c := NewClients(Options{Size: 2})
	if _, err := c.For([]byte(kubeconfig("", "    tokenFile: /t"))); err == nil {
		t.Fatal("a token file was accepted")
	}
	if s := c.Stats(); s.Len != 0 {
		t.Errorf("a refused kubeconfig was cached: %+v", s)
	}
}

func TestClientsRefuseBadCAData(t *testing.T) {
	c := NewClients(Options{Size: 2})
	_, err := c.For([]byte(kubeconfig("", "    token: t")))
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "TLS settings") {
		t.Fatalf("error %v, want a refusal that names the TLS settings", err)
	}
}

// TestClientsRecall: a failure a condition recorded for a runtime opens its
// circuit, so that the runtime is not called until the recorded next try; a
// failure recorded for another server (the kubeconfig changed) is not recalled.
func TestClientsRecall(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","namespace":"ns"}}`))
	}))
	defer srv.Close()
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	kc := []byte(strings.Replace(strings.Replace(kubeconfig("", "    token: t"), "Q0EtREFUQS1TRUNSRVQ=", ca, 1), "https://api.rt.example:443", srv.URL, 1))
	host := strings.TrimPrefix(srv.URL, "https://")
	cases := map[string]struct {
		reason string
		target string
		// evicted: other runtimes' clients pushed this one out of the
		// cache between For and Recall, as with many reconciles at once.
		evicted   bool
		wantCalls int32
	}{
		"this runtime's failure":                   {reason: "a failure recalled for a runtime's server opens its circuit: no call reaches it", target: "https://" + host, wantCalls: 0},
		"this runtime's failure, client evicted":   {reason: "the recall holds for a client built again after eviction", target: "https://" + host, evicted: true, wantCalls: 0},
		"another server's failure":                 {reason: "a failure of the server the runtime had before opens nothing now", target: "https://old.rt.example:443", wantCalls: 1},
		"another server's failure, client evicted": {reason: "the same after eviction", target: "https://old.rt.example:443", evicted: true, wantCalls: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			calls.Store(0)
			c := NewClients(Options{Size: 1})
			core, err := c.For(kc)
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if tc.evicted {
				if _, err := c.For([]byte(strings.Replace(string(kc), "token: t", "token: other", 1))); err != nil {
					t.Fatalf("%s\n%v", tc.reason, err)
				}
			}
			c.Recall(context.Background(), kc, breaker.Failure{Target: tc.target, Cause: "timeout", Next: time.Now().Add(time.Hour)})
			_, err = core.Secrets("ns").Get(context.Background(), "s", metav1.GetOptions{})
			if calls.Load() != tc.wantCalls {
				t.Fatalf("%s\n%d calls reached the runtime, want %d (%v)", tc.reason, calls.Load(), tc.wantCalls, err)
			}
			var failed *breaker.Error
			if tc.wantCalls == 0 && (!errors.As(err, &failed) || failed.Cause != "timeout") {
				t.Fatalf("%s\ngot %v, want the recalled failure", tc.reason, err)
			}
		})
	}
}

// failedFast tells whether err is a call refused by an open circuit.
func failedFast(err error) bool {
	var e *breaker.Error
	return errors.As(err, &e) && e.FailedFast
}
