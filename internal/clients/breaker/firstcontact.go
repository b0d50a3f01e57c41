package breaker

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// A first contact is a call to a target whose health is not known: it never
// answered, or not for longer than Options.Fresh (after a restart every
// target is such; so is every runtime of a region whose network just went).
// A healthy API server answers it within FirstContactGrace; one that accepts
// connections and never answers holds the caller until the connect timeout.
// So a worker waits on a first contact for the grace; beyond it, only while
// holding one of BrokenCalls slots. Without a slot, a Read goes on without
// the worker (detached: its answer only teaches the circuits), and the
// resource comes back after firstContactRetry to find the target known
// healthy or failing; a request that may change the target is not started.
const (
	FirstContactGrace = 100 * time.Millisecond
	// firstContactRetry is when a resource whose first contact went on
	// without it tries again: a healthy target has answered by then.
	firstContactRetry = time.Second
)

// probe is a target's first contact in flight.
type probe struct {
	done chan struct{} // closed once answered (or failed)

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

// firstContact makes r as the target's first contact, or, while another is in
// flight, waits for its answer within the grace and then calls as that answer
// tells.
func (t *Target) firstContact(ctx context.Context, r Request) (*http.Response, error) {
	t.mu.Lock()
	if p := t.probe; p != nil {
		t.mu.Unlock()
		if !waitFor(ctx, p.done, FirstContactGrace) {
			return nil, t.refuse(ctx, refusedFirstContact)
		}
		if t.healthy() && !t.known() {
			return nil, t.refuse(ctx, refusedFirstContact)
		}
		return t.Do(ctx, r)
	}
	s := t.set
	if !r.Read {
		// Not detachable: the worker waits for the whole call, so it needs a slot.
		if !s.firstContacts.TryAcquirePermit() {
			t.mu.Unlock()
			return nil, t.refuse(ctx, refusedFirstContact)
		}
	} else if !s.detached.TryAcquirePermit() {
		t.mu.Unlock()
		return nil, t.refuse(ctx, refusedFirstContact)
	}
	p := &probe{done: make(chan struct{})}
	t.probe = p
	t.mu.Unlock()

	m := s.opts.Metrics
	kind := string(s.opts.Kind)
	if !r.Read {
		defer s.firstContacts.ReleasePermit()
		held := m.firstContactWorkers.WithLabelValues(kind)
		held.Inc()
		defer held.Dec()
		resp, err := t.call(ctx, r.Do)
		t.settle(p, nil, nil)
		return resp, err
	}

	inFlight := m.firstContacts.WithLabelValues(kind)
	inFlight.Inc()
	go func() {
		defer s.detached.ReleasePermit()
		defer inFlight.Dec()
		// The caller's context ends with its reconcile; the request's own
		// timeout bounds this one.
		resp, err := t.call(context.WithoutCancel(ctx), r.Do)
		t.settle(p, resp, err)
	}()

	if waitFor(ctx, p.done, FirstContactGrace) {
		return p.take()
	}
	if s.firstContacts.TryAcquirePermit() {
		defer s.firstContacts.ReleasePermit()
		held := m.firstContactWorkers.WithLabelValues(kind)
		held.Inc()
		defer held.Dec()
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
	return nil, t.refuse(ctx, refusedFirstContact)
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
