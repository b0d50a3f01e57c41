package breaker

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// A first contact is a call to a target whose health is not known: it never
// answered, or not for longer than Options.Fresh (after a restart every
// target is such; so is every runtime of a region whose network just went).
// A probe is the first call to a failing target once its circuit is due. A
// healthy API server answers either within FirstContactGrace; one that
// accepts connections and never answers holds the caller until the connect
// timeout. So a worker waits on a first contact or a probe for the grace;
// beyond it, only while holding a slot of the Set's bulkhead (shared with the
// calls to failing targets). Without a slot, a read goes on without the
// worker (detached: its answer only teaches the circuits), and the resource
// comes back when that answer is due; a request that may change the target
// is not started.
const FirstContactGrace = 100 * time.Millisecond

// firstContactRetry is the soonest a resource whose first contact went on
// without it tries again: a healthy target has answered by then.
const firstContactRetry = time.Second

// probe is a target's first contact (or probe) in flight.
type probe struct {
	start time.Time
	// failing: the target was failing when it started; else its health was
	// not known.
	failing bool
	done    chan struct{} // closed once answered (or failed)

	mu        sync.Mutex
	finished  bool
	abandoned bool // no caller takes the answer: close its body
	resp      *http.Response
	err       error
}

// known tells whether the target answered within the Set's Fresh.
func (t *Target) known() bool {
	a := t.answered.Load()
	return a != 0 && time.Since(time.Unix(0, a)) < t.set.opts.Fresh
}

// probing tells whether the target's first contact or probe is in flight.
func (t *Target) probing() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.probe != nil
}

// firstContact makes r as the target's first contact or probe, or, while one
// is in flight, waits for its answer within the grace and then calls as that
// answer tells.
func (t *Target) firstContact(ctx context.Context, r Request) (*http.Response, error) {
	failing := !t.healthy()
	t.mu.Lock()
	if p := t.probe; p != nil {
		t.mu.Unlock()
		if !waitFor(ctx, p.done, FirstContactGrace) {
			return nil, t.refusePending(ctx, p)
		}
		if t.healthy() && !t.known() {
			return nil, t.refusePending(ctx, p)
		}
		return t.Do(ctx, r)
	}
	s := t.set
	var release func()
	ok := false
	if !r.Read {
		// Not detachable: the worker waits for the whole call, so it needs a slot.
		release, ok = s.holdWorker()
	} else {
		release, ok = s.acquireDetached(scopeFrom(ctx))
	}
	if !ok {
		t.mu.Unlock()
		return nil, t.refuse(ctx, refusedFirstContact)
	}
	p := &probe{start: time.Now(), failing: failing, done: make(chan struct{})}
	t.probe = p
	t.mu.Unlock()

	if !r.Read {
		defer release()
		resp, err := t.call(ctx, r.Do)
		t.settle(p, nil, nil)
		return resp, err
	}

	m := s.opts.Metrics
	kind := string(s.opts.Kind)

	inFlight := m.firstContacts.WithLabelValues(kind)
	inFlight.Inc()
	go func() {
		defer release()
		defer inFlight.Dec()
		// The caller's context ends with its reconcile; the request's own
		// timeout bounds this one.
		resp, err := t.call(context.WithoutCancel(ctx), r.Do)
		t.settle(p, resp, err)
	}()

	if waitFor(ctx, p.done, FirstContactGrace) {
		return p.take()
	}
	if release, ok := s.holdWorker(); ok {
		defer release()
		select {
		case <-p.done:
			return p.take()
		case <-ctx.Done():
		}
	}
	if resp, err, ok := p.abandon(); ok {
		return resp, err
	}
	m.detached.WithLabelValues(kind).Inc()
	return nil, t.refusePending(ctx, p)
}

// refusePending refuses a call while the target's first contact or probe is
// in flight. Its resource comes back when the answer is due: a first contact,
// after a second, then after twice as long as it has been out; a probe of a
// failing target (which names its cause meanwhile), after a base delay.
func (t *Target) refusePending(ctx context.Context, p *probe) error {
	if !p.failing {
		return t.refuse(ctx, refusedFirstContact)
	}
	return t.refuse(ctx, refusedProbing)
}

// settle records the first contact's answer and ends it.
func (t *Target) settle(p *probe, resp *http.Response, err error) {
	t.mu.Lock()
	if t.probe == p {
		t.probe = nil
	}
	t.mu.Unlock()
	p.mu.Lock()
	p.finished, p.resp, p.err = true, resp, err
	abandoned := p.abandoned
	p.mu.Unlock()
	close(p.done)
	if abandoned && resp != nil {
		_ = resp.Body.Close()
	}
}

// take returns the answer of a finished first contact.
func (p *probe) take() (*http.Response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resp, p.err
}

// abandon leaves the first contact's answer to close itself; if it came
// meanwhile, it returns it instead.
func (p *probe) abandon() (*http.Response, error, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return p.resp, p.err, true
	}
	p.abandoned = true
	return nil, nil, false
}

// pendingRetry is when a resource whose target has not answered its first
// contact comes back: after a second, then after twice as long as the first
// contact has been out, so that one hanging until its connect timeout costs
// its resource two or three tries, not one a second.
func (t *Target) pendingRetry() time.Time {
	d := firstContactRetry
	t.mu.Lock()
	if t.probe != nil {
		d = max(d, 2*time.Since(t.probe.start))
	}
	t.mu.Unlock()
	return time.Now().Add(d + rand.N(d/10))
}

// waitFor waits for done up to d; false if d passed or ctx ended first.
func waitFor(ctx context.Context, done <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}
