// Package runtimewatcher receives the events Kyma's runtime-watcher sends when
// a Secret the provider keeps on a runtime is created, changed or deleted, and
// enqueues the RuntimeSecret that keeps it, so that a broken Secret is
// repaired within a second instead of at the next poll.
//
// On each runtime, Lifecycle Manager's skr-webhook (a validating webhook on the
// Secrets labelled as the Watcher CR in cluster/watcher.yaml selects) POSTs
// {watched:{namespace,name}, watchedGvk} over mTLS to the control plane's
// gateway, which forwards it here with the runtime's client certificate in
// X-Forwarded-Client-Cert; the runtime ID is that certificate's common name.
//
// The listener reads requests with the runtime-watcher listener module's own
// parts (the header parsing, the event type, the path and its size limit) but
// is not its SKREventListener: that one enqueues whatever parses, answers 200
// to an unknown runtime or a foreign object, cannot tell a flood, and keeps its
// metrics in package globals. Here every request is checked before anything is
// enqueued, and each refusal is an HTTP error and a metric.
package runtimewatcher

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/kyma-project/runtime-watcher/listener/pkg/v2/certificate"
	"github.com/kyma-project/runtime-watcher/listener/pkg/v2/types"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Defaults of a listener.
const (
	// DefaultComponent is the component in the path /v2/<component>/event, the
	// Watcher CR's spec.manager.
	DefaultComponent = "provider-eventing-auth"
	// DefaultSettle is how long an event waits before its reconcile. The
	// skr-webhook reports a change while the runtime's API server validates
	// it, before it is stored: read at once, the Secret could still look as
	// it did.
	DefaultSettle = 500 * time.Millisecond
	// DefaultPerRuntime and DefaultBurst bound the events taken from one
	// runtime. A runtime at peace sends about one a minute at most (a change
	// and the echo of its repair); past that its events are refused with 429.
	DefaultPerRuntime = 5
	DefaultBurst      = 10
	// maxBody is the runtime-watcher listener's own limit.
	maxBody = 16 << 10
)

// SecretGVK is the kind of object the provider keeps on runtimes.
var SecretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// Targets finds the RuntimeSecrets an event may concern.
type Targets interface {
	// Of returns the RuntimeSecrets of runtime id, each with the Secret it
	// keeps there (namespace and name).
	Of(ctx context.Context, id string) ([]Target, error)
}

// Target is a RuntimeSecret and the Secret it keeps on its runtime.
type Target struct {
	RuntimeSecret ktypes.NamespacedName
	Secret        ktypes.NamespacedName
}

// Options configure a Listener.
type Options struct {
	// Addr is the address to listen on, host:port.
	Addr string
	// Component names the path, /v2/<component>/event.
	Component string
	// Settle is how long an event waits before its reconcile.
	Settle time.Duration
	// PerRuntime and Burst bound the events taken from one runtime.
	PerRuntime rate.Limit
	Burst      int
	Metrics    *Metrics
	Log        logr.Logger
	Clock      clock.Clock
	// ClientCAs, if set, are the CAs a runtime's forwarded client certificate
	// must chain to (--runtime-watcher-client-ca); any other caller is
	// refused with 401 before anything else is looked at.
	ClientCAs *x509.CertPool
	// ClientCAFile, if set, is the file ClientCAs were read from: it is read
	// again while the listener runs, and a change is trusted from then on.
	ClientCAFile string
	// ClientCAMissing says ClientCAFile did not exist when read: ClientCAs
	// trusts nothing until it appears.
	ClientCAMissing bool
	// Advertise is where the other replicas reach this listener
	// (--runtime-watcher-advertise-address), and Leader where the leader
	// publishes its own: with both, a standby hands events to the leader.
	Advertise string
	Leader    LeaderAddress
	// RelayKey signs the events the replicas hand to each other; a request
	// that says it was relayed is refused without its signature.
	RelayKey []byte
}

// Defaulted fills in what is unset.
func (o Options) Defaulted() Options {
	if o.Component == "" {
		o.Component = DefaultComponent
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.PerRuntime <= 0 {
		o.PerRuntime = DefaultPerRuntime
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Log.GetSink() == nil {
		o.Log = logr.Discard()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	return o
}

// A Listener serves the runtime-watcher's events and enqueues the RuntimeSecret
// each concerns in the controller it is a source of.
type Listener struct {
	o       Options
	targets Targets
	repairs *repairs
	echoes  *echoes
	ids     *runtimeIDs
	// held are the events this replica could not hand on while it stood by.
	held        *held
	relayClient *http.Client

	queue atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]
	addr  atomic.Pointer[string] // bound address, once listening

	// caMissing is true while the CA file does not exist.
	caMissing atomic.Bool

	limitersMu sync.Mutex
	limiters   *cache.Expiring // runtime ID -> *rate.Limiter
}

// New returns a listener of o that finds RuntimeSecrets with targets.
func New(o Options, targets Targets) *Listener {
	o = o.Defaulted()
	l := &Listener{o: o, targets: targets, repairs: newRepairs(o.Clock), echoes: newEchoes(), ids: newRuntimeIDs(o.ClientCAs, o.Clock),
		limiters: cache.NewExpiringWithClock(o.Clock), held: &held{},
		relayClient: &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	l.setCAMissing(o.ClientCAMissing)
	return l
}

// Addr is the address the listener is bound to; "" before it listens.
func (l *Listener) Addr() string {
	if a := l.addr.Load(); a != nil {
		return *a
	}
	return ""
}

// Path is where events are posted.
func (l *Listener) Path() string { return fmt.Sprintf("/v2/%s/event", l.o.Component) }

// Start serves events until ctx ends, on every replica from the process's
// start (a manager Runnable that needs no leadership): the watcher Service
// sends each event to any replica, and a standby hands it to the leader.
func (l *Listener) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", l.o.Addr)
	if err != nil {
		return fmt.Errorf("cannot listen for runtime-watcher events on %s: %w", l.o.Addr, err)
	}
	bound := ln.Addr().String()
	l.addr.Store(&bound)
	mux := http.NewServeMux()
	mux.Handle(l.Path(), l)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) //nolint:errcheck // Stopping anyway.
	}()
	if l.o.ClientCAFile != "" {
		go l.followClientCAs(ctx)
	}
	if l.o.Leader != nil && l.o.Advertise != "" {
		go l.relayHeld(ctx)
	}
	l.o.Log.Info("Listening for runtime-watcher events", "address", bound, "path", l.Path())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("the runtime-watcher listener stopped: %w", err)
	}
	return nil
}

// NeedLeaderElection is false: every replica listens.
func (l *Listener) NeedLeaderElection() bool { return false }

// Source is the listener as a source of the RuntimeSecret controller: when the
// controller starts (on the leader, once its caches synced) the listener
// enqueues into its queue, publishes its address for the standbys, and takes
// the events it held while it stood by.
func (l *Listener) Source() source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		l.queue.Store(&q)
		if l.o.Leader != nil && l.o.Advertise != "" {
			if err := l.o.Leader.Set(ctx, l.o.Advertise); err != nil {
				// The standbys hold what they get until they reach a leader.
				l.o.Log.Error(err, "Cannot publish the runtime-watcher listener's address for the standby replicas")
			}
		}
		l.replay(ctx)
		return nil
	})
}

// refusal is an event not taken: what the sender is told, and why, for the
// metric.
type refusal struct {
	code   int
	reason string
	msg    string
}

// ServeHTTP checks one event and enqueues the RuntimeSecrets it concerns.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.o.Metrics.received.Inc()
	q := l.queue.Load()
	if q == nil {
		// A standby, or a leader whose controller has not started yet.
		l.relay(w, r)
		return
	}
	id, reqs, ref := l.check(r)
	if ref != nil {
		l.refuse(w, id, ref)
		return
	}
	for _, req := range reqs {
		if l.echoes.take(req.NamespacedName) {
			// The provider's own write: nothing to read again.
			l.o.Metrics.echoes.Inc()
			continue
		}
		wait := l.repairs.eventArrived(req.NamespacedName)
		(*q).AddAfter(req, l.o.Settle+wait)
	}
	l.o.Metrics.lastEvent.Set(float64(l.o.Clock.Now().Unix()))
	w.WriteHeader(http.StatusOK)
}

// refuse answers a request not taken, and counts it.
func (l *Listener) refuse(w http.ResponseWriter, id string, ref *refusal) {
	l.o.Metrics.dropped.WithLabelValues(ref.reason).Inc()
	if ref.code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(int(1/float64(l.o.PerRuntime))+1))
	}
	l.o.Log.V(1).Info("Refused a runtime-watcher event", "runtime", id, "reason", ref.reason, "message", ref.msg)
	http.Error(w, ref.msg, ref.code)
}

// oversized is the refusal of a body over maxBody.
var oversized = &refusal{http.StatusRequestEntityTooLarge, DropOversized, fmt.Sprintf("a body over %d bytes is not accepted", maxBody)}

// admit refuses what no replica takes, whichever serves the request: another
// method than POST, a body declared too long, a caller not authenticated.
// It returns the runtime ID the caller's certificate names.
func (l *Listener) admit(r *http.Request) (string, *refusal) {
	if r.Method != http.MethodPost {
		return "", &refusal{http.StatusMethodNotAllowed, DropMethod, "only POST is served"}
	}
	if r.ContentLength > maxBody {
		return "", oversized
	}
	if ref := l.checkRelay(r); ref != nil {
		return "", ref
	}
	return l.authenticate(r)
}

// authenticate reads the runtime ID as Lifecycle Manager does, the common
// name of the client certificate the gateway forwards, once that certificate
// is trusted.
func (l *Listener) authenticate(r *http.Request) (string, *refusal) {
	id, err := l.ids.of(r)
	switch {
	case errors.Is(err, certificate.ErrHeaderMissing):
		return "", &refusal{http.StatusUnauthorized, DropNoCertificate, err.Error()}
	case errors.Is(err, errUntrusted):
		return "", &refusal{http.StatusUnauthorized, DropUntrusted, err.Error()}
	case err != nil:
		return "", &refusal{http.StatusUnauthorized, DropBadCertificate, "the client certificate header cannot be read: " + err.Error()}
	case id == "":
		return "", &refusal{http.StatusBadRequest, DropBadCertificate, "the client certificate's common name, the runtime ID, is empty"}
	}
	return id, nil
}

// check reads and checks a request: the runtime it came from and the requests
// to enqueue, or why it is refused.
func (l *Listener) check(r *http.Request) (string, []reconcile.Request, *refusal) {
	id, ref := l.admit(r)
	if ref != nil {
		return id, nil, ref
	}
	ev := types.WatchEvent{}
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody)).Decode(&ev); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return id, nil, oversized
		}
		return id, nil, &refusal{http.StatusBadRequest, DropMalformedBody, "the body is not a runtime-watcher event: " + err.Error()}
	}
	if ev.Watched.Name == "" {
		return id, nil, &refusal{http.StatusBadRequest, DropMalformedBody, "the event names no object (watched.name is empty)"}
	}
	targets, err := l.targets.Of(r.Context(), id)
	if err != nil {
		// The cache did not answer; the sender retries.
		return id, nil, &refusal{http.StatusServiceUnavailable, DropUnknownRuntime, "cannot look the runtime up: " + err.Error()}
	}
	if len(targets) == 0 {
		return id, nil, &refusal{http.StatusNotFound, DropUnknownRuntime, fmt.Sprintf("no RuntimeSecret is for runtime %s", id)}
	}
	if gvk := schema.GroupVersionKind(ev.WatchedGvk); gvk != SecretGVK {
		return id, nil, &refusal{http.StatusUnprocessableEntity, DropWrongObject, fmt.Sprintf("the provider keeps only Secrets on runtimes, not %s", gvk)}
	}
	var reqs []reconcile.Request
	for _, t := range targets {
		if t.Secret == ev.Watched {
			reqs = append(reqs, reconcile.Request{NamespacedName: t.RuntimeSecret})
		}
	}
	if len(reqs) == 0 {
		return id, nil, &refusal{http.StatusUnprocessableEntity, DropWrongObject, fmt.Sprintf("the provider keeps no Secret %s on runtime %s", ev.Watched, id)}
	}
	// Only an event for an object the runtime holds spends its budget: wrong
	// or forged ones never push a real runtime's events into 429.
	if !l.limiter(id).Allow() {
		return id, nil, &refusal{http.StatusTooManyRequests, DropFlood, fmt.Sprintf("runtime %s sends more than %v events a second", id, l.o.PerRuntime)}
	}
	return id, reqs, nil
}

// limiter returns the event budget of runtime id. Budgets of runtimes that
// sent nothing for a minute are forgotten: a full one is as good as new.
func (l *Listener) limiter(id string) *rate.Limiter {
	l.limitersMu.Lock()
	defer l.limitersMu.Unlock()
	if v, ok := l.limiters.Get(id); ok {
		return v.(*rate.Limiter)
	}
	lim := rate.NewLimiter(l.o.PerRuntime, l.o.Burst)
	l.limiters.Set(id, lim, time.Minute)
	return lim
}

// TookEvent tells whether an event brought this reconcile of the RuntimeSecret
// key, and forgets the event.
func (l *Listener) TookEvent(key ktypes.NamespacedName) bool {
	return l.repairs.takeEvent(key)
}

// Repairing records that the Secret of RuntimeSecret key was changed or deleted
// by someone else and is being put back, found by an event or not, and tells
// whether that makes a fight.
func (l *Listener) Repairing(key ktypes.NamespacedName, fromEvent bool) Fight {
	trigger := TriggerPoll
	if fromEvent {
		trigger = TriggerEvent
	}
	l.o.Metrics.repairs.WithLabelValues(trigger).Inc()
	f := l.repairs.changed(key)
	if f.Started {
		l.o.Metrics.fights.Inc()
	}
	return f
}

// OwnWrite notes that the provider writes the Secret of RuntimeSecret key on
// its runtime, so that the write's own event, its echo, brings no reconcile;
// done is called once the write returned, written when it succeeded.
func (l *Listener) OwnWrite(key ktypes.NamespacedName) (done func(written bool)) {
	stop := l.echoes.writing(key)
	return func(written bool) {
		stop()
		if written {
			l.o.Metrics.writes.Inc()
		}
	}
}
