package runtimewatcher

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// With leader election every replica listens, since the watcher Service
// sends each event to any of them; only the leader runs the RuntimeSecret
// controller. A standby hands an event on to the leader, whose address the
// leader publishes (LeaderAddress); while there is none it can reach (the
// leader was killed and the lease not yet taken over), the standby holds the
// event, hands it to the next leader as soon as one is reachable, or replays
// it into its own controller should it become the leader itself.

// How events are relayed, the values of the how label.
const (
	HandedForwarded = "forwarded"
	HandedHeld      = "held"
	HandedReplayed  = "replayed"
	HandedDropped   = "dropped"
)

// maxHeld bounds the events a standby holds: a failover lasts a lease (15 s),
// in which a landscape's runtimes send far fewer.
const maxHeld = 1000

// headerRelayed marks an event one replica handed to another, which never
// hands it on again.
const headerRelayed = "X-Eventing-Auth-Relayed"

// LeaderAddress publishes where the leader's listener is reached.
type LeaderAddress interface {
	// Get returns the leader's address, "" if none was published.
	Get(ctx context.Context) (string, error)
	// Set publishes addr as the leader's.
	Set(ctx context.Context, addr string) error
}

// heldEvent is an event a standby could not hand on.
type heldEvent struct {
	xfcc, contentType string
	body              []byte
}

// headerClientCert carries the gateway's client certificate of the runtime.
const headerClientCert = "X-Forwarded-Client-Cert"

// request is ev posted to url again, as the gateway posted it.
func (ev heldEvent) request(ctx context.Context, url string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(ev.body))
	if err != nil {
		return nil, err
	}
	req.Header.Set(headerClientCert, ev.xfcc)
	req.Header.Set("Content-Type", ev.contentType)
	return req, nil
}

// held are the events a standby holds, oldest first.
type held struct {
	mu     sync.Mutex
	events []heldEvent
}

// add holds e and tells whether an older one had to go for it.
func (h *held) add(e heldEvent) (dropped bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.events) >= maxHeld {
		h.events, dropped = h.events[1:], true
	}
	h.events = append(h.events, e)
	return dropped
}

// putBack holds events again, ahead of those held since they were taken.
func (h *held) putBack(events []heldEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(slices.Clone(events), h.events...)
	if over := len(h.events) - maxHeld; over > 0 {
		h.events = h.events[over:]
	}
}

func (h *held) take() []heldEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.events
	h.events = nil
	return out
}

// relay serves an event on a standby: authenticated as the leader would,
// then forwarded to the leader, or held.
func (l *Listener) relay(w http.ResponseWriter, r *http.Request) {
	if _, ref := l.admit(r); ref != nil {
		l.refuse(w, "", ref)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		l.refuse(w, "", oversized)
		return
	}
	ev := heldEvent{xfcc: r.Header.Get(headerClientCert), contentType: r.Header.Get("Content-Type"), body: body}
	if r.Header.Get(headerRelayed) == "" && l.forward(r.Context(), w, ev) {
		l.o.Metrics.handed.WithLabelValues(HandedForwarded).Inc()
		return
	}
	if l.held.add(ev) {
		l.o.Metrics.handed.WithLabelValues(HandedDropped).Inc()
	}
	l.o.Metrics.handed.WithLabelValues(HandedHeld).Inc()
	// Taken: the sender need not try again.
	w.WriteHeader(http.StatusOK)
}

// forward posts ev to the leader and passes its answer on; false when there
// is no leader to reach.
func (l *Listener) forward(ctx context.Context, w http.ResponseWriter, ev heldEvent) bool {
	if l.o.Leader == nil {
		return false
	}
	addr, err := l.o.Leader.Get(ctx)
	if err != nil || addr == "" || addr == l.o.Advertise {
		// None published, or this replica's own from before a restart.
		return false
	}
	req, err := ev.request(ctx, "http://"+addr+l.Path())
	if err != nil {
		return false
	}
	req.Header.Set(headerRelayed, l.o.Advertise)
	req.Header.Set(headerRelaySignature, relaySignature(l.o.RelayKey, l.o.Advertise, ev.xfcc, ev.body))
	resp, err := l.relayClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close() //nolint:errcheck // Read below.
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode == http.StatusServiceUnavailable {
		// The leader's controller has not started yet: keep it here too.
		return false
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(msg)
	return true
}

// heldRetry is how often a standby tries again to hand its held events to
// the leader: an event reaches whichever replica leads within about this
// long of that replica publishing its address.
const heldRetry = 500 * time.Millisecond

// relayHeld hands the held events to the leader, every heldRetry while this
// replica stands by and holds any, until ctx ends; those the leader does not
// take stay held.
func (l *Listener) relayHeld(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(heldRetry):
		}
		if l.queue.Load() != nil {
			return // Leading: what it held was replayed.
		}
		events := l.held.take()
		for i, ev := range events {
			if !l.forward(ctx, &discard{header: http.Header{}}, ev) {
				l.held.putBack(events[i:])
				break
			}
			l.o.Metrics.handed.WithLabelValues(HandedForwarded).Inc()
		}
	}
}

// replay takes the events held while this replica stood by into its own
// controller, as if they came now.
func (l *Listener) replay(ctx context.Context) {
	for _, ev := range l.held.take() {
		req, err := ev.request(ctx, l.Path())
		if err != nil {
			continue
		}
		l.o.Metrics.handed.WithLabelValues(HandedReplayed).Inc()
		l.ServeHTTP(&discard{header: http.Header{}}, req)
	}
}

// discard is a ResponseWriter nobody reads.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// LeaseAddress is a LeaderAddress kept in a Lease of its own, whose holder is
// the leader's listener address: written once per leadership, read by a
// standby for each event it hands on.
type LeaseAddress struct {
	// Reader reads the Lease from the API server (uncached: a cache would
	// watch every Lease of the cluster for one read per handed event).
	Reader    client.Reader
	Writer    client.Client
	Namespace string
	Name      string
}

// Get returns the published address.
func (a LeaseAddress) Get(ctx context.Context) (string, error) {
	l := &coordinationv1.Lease{}
	if err := a.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Name}, l); err != nil {
		if kerrors.IsNotFound(err) {
			return "", nil
		}
		return "", err
	}
	return ptr.Deref(l.Spec.HolderIdentity, ""), nil
}

// Set publishes addr.
func (a LeaseAddress) Set(ctx context.Context, addr string) error {
	now := metav1.NewMicroTime(time.Now())
	l := &coordinationv1.Lease{}
	err := a.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Name}, l)
	switch {
	case kerrors.IsNotFound(err):
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: a.Name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &addr, AcquireTime: &now}}
		return a.Writer.Create(ctx, l)
	case err != nil:
		return err
	case ptr.Deref(l.Spec.HolderIdentity, "") == addr:
		return nil
	}
	l.Spec.HolderIdentity, l.Spec.AcquireTime = &addr, &now
	return a.Writer.Update(ctx, l)
}
