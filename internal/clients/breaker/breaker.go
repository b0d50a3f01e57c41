// Package breaker keeps broken targets (an IAS tenant, a runtime's API server)
// from holding back healthy work: a circuit breaker per target (failsafe-go's)
// makes calls to a target known to fail fail fast, its half-open probe comes
// after a delay that doubles up to a cap, and a bulkhead shared by all targets
// of one kind bounds how many calls to failing targets run at once, and so the
// share of a controller's workers they can hold. Calls to targets of unknown
// health (first contacts, see firstcontact.go) are bounded the same way, and a
// target's failure that a resource's condition recorded before a restart opens
// its circuit again (see recall.go).
package breaker

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
)

// Kind names what a Set guards; it labels metrics and messages.
type Kind string

// The kinds of target.
const (
	Tenant  Kind = "tenant"
	Runtime Kind = "runtime"
)

// Defaults of Options.
const (
	DefaultBaseDelay = 5 * time.Second
	// DefaultMaxDelay with its jitter of 10% keeps a target that comes back
	// waiting less than a minute for its next probe.
	DefaultMaxDelay = 50 * time.Second
	// DefaultBrokenCalls of a controller's 10 workers may wait on failing targets.
	DefaultBrokenCalls = 2
	// DefaultRejectedDelay is how long credentials a target rejected are not
	// tried again, unless they change: IAS locks a user after a few failed logons.
	DefaultRejectedDelay = 10 * time.Minute
	// DefaultDetachedCalls bounds the first contacts that go on without a
	// worker (see firstcontact.go): each holds a connection being set up.
	DefaultDetachedCalls = 256
	// DefaultMaxScopedTargets: a target is a few hundred bytes.
	DefaultMaxScopedTargets = 10000
)

// ErrTooManyTargets is a call of a scope other than the platform's refused
// because the Set keeps as many such targets as it may.
var ErrTooManyTargets = errors.New("the provider keeps circuits for as many runtimes outside the platform's namespace as it may; " +
	"it takes new ones as others are no longer used")

// Options of a Set.
type Options struct {
	Kind Kind
	// BaseDelay is the first open period; each failed probe doubles it, up to
	// MaxDelay.
	BaseDelay, MaxDelay time.Duration
	// ServerErrorThreshold is how many 5xx answers in a row open the circuit;
	// default 1. A call that got no answer opens it at once.
	ServerErrorThreshold uint
	// BrokenCalls bounds the workers, across all targets of the Set, waiting
	// on calls to targets whose circuit is not closed, and on first contacts
	// and probes beyond FirstContactGrace.
	BrokenCalls int
	// Fresh, if set, is how long an answer keeps a target known to be healthy:
	// a call to a target not heard from for longer is a first contact, and so
	// is any call to a target that never answered. Unset, the Set makes no
	// first contacts of its own: a target's first calls go one at a time until
	// one is answered (as credentials are verified, see Rejected).
	Fresh time.Duration
	// DetachedCalls bounds first contacts in flight that no worker waits for,
	// of the platform's scope and of all other scopes together each; default
	// DefaultDetachedCalls (see scope.go).
	DetachedCalls int
	// PlatformScope is the scope (WithScope) whose first contacts have
	// permits of their own; empty: none has.
	PlatformScope string
	// ScopeDetachedCalls bounds the shared permits one scope holds; default
	// an eighth of DetachedCalls.
	ScopeDetachedCalls int
	// MaxScopedTargets bounds, with a PlatformScope, the targets kept for
	// calls of every other scope together; default DefaultMaxScopedTargets.
	// The platform's are as many as its runtimes.
	MaxScopedTargets int
	// Rejected, if set, tells an answer that rejects the caller's credentials
	// (IAS: 401, or 403 on an admin call). One such answer opens the target's
	// logon circuit at once, for RejectedDelay.
	Rejected      func(*http.Response) bool
	RejectedDelay time.Duration
	Metrics       *Metrics
}

// A Set holds the breakers of one kind of target, keyed by the caller.
type Set struct {
	opts   Options
	broken bulkhead.Bulkhead[*http.Response]
	// detached are the first contacts and probes that go on without a worker.
	detached *detachedPermits

	mu      sync.Mutex
	targets map[string]*Target
	pruned  time.Time
	// scoped counts the targets made for scopes other than PlatformScope.
	scoped int
}

// NewSet returns a Set with the options' defaults filled in.
func NewSet(o Options) *Set {
	if o.BaseDelay <= 0 {
		o.BaseDelay = DefaultBaseDelay
	}
	if o.MaxDelay < o.BaseDelay {
		o.MaxDelay = max(DefaultMaxDelay, o.BaseDelay)
	}
	if o.ServerErrorThreshold == 0 {
		o.ServerErrorThreshold = 1
	}
	if o.BrokenCalls <= 0 {
		o.BrokenCalls = DefaultBrokenCalls
	}
	if o.RejectedDelay <= 0 {
		o.RejectedDelay = DefaultRejectedDelay
	}
	if o.DetachedCalls <= 0 {
		o.DetachedCalls = DefaultDetachedCalls
	}
	if o.ScopeDetachedCalls <= 0 {
		o.ScopeDetachedCalls = max(1, o.DetachedCalls/8)
	}
	if o.MaxScopedTargets <= 0 {
		o.MaxScopedTargets = DefaultMaxScopedTargets
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	o.Metrics.init(o.Kind)
	return &Set{opts: o, broken: bulkhead.New[*http.Response](uint(o.BrokenCalls)),
		detached: newDetachedPermits(o),
		targets:  map[string]*Target{}, pruned: time.Now()}
}

// pruneEvery is how often targets unused for a while are dropped: targets are
// kept per runtime and per credentials, and a landscape has thousands.
const pruneEvery = time.Minute

// Target returns the breaker of the target under key (which identifies it, and
// may be a digest of its credentials), creating it if need be. name is how
// messages call it: a URL or host, never a credential.
// It is not bounded: Guard and Recall are, for calls outside the platform's
// scope.
func (s *Set) Target(key, name string) *Target {
	t, _, _ := s.target(key, name, false)
	return t
}

// target is Target, and tells whether it made the target just now. A target
// for a scope other than the platform's (scoped) is made only within
// MaxScopedTargets, after a prune if need be; else ErrTooManyTargets.
func (s *Set) target(key, name string, scoped bool) (*Target, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if now.Sub(s.pruned) > pruneEvery {
		s.pruned = now
		s.pruneLocked(now)
	}
	if t, ok := s.targets[key]; ok {
		t.used.Store(now.UnixNano())
		return t, false, nil
	}
	if scoped && s.scoped >= s.opts.MaxScopedTargets && now.Sub(s.pruned) > fullPruneEvery {
		s.pruned = now
		s.pruneLocked(now)
	}
	if scoped && s.scoped >= s.opts.MaxScopedTargets {
		return nil, false, ErrTooManyTargets
	}
	t := newTarget(s, name)
	t.scoped = scoped
	if scoped {
		s.scoped++
	}
	s.targets[key] = t
	return t, true, nil
}

// fullPruneEvery spaces the prunes a Set full of scoped targets asks for.
const fullPruneEvery = 5 * time.Second

// scoped tells whether calls under ctx are of a scope other than the
// platform's, whose targets are bounded.
func (s *Set) scopedCall(ctx context.Context) bool {
	return s.opts.PlatformScope != "" && scopeFrom(ctx) != s.opts.PlatformScope
}

// holdWorker takes one of the slots for workers waiting on failing or
// unknown targets, counted in the gauge; false if every slot is held.
func (s *Set) holdWorker() (release func(), ok bool) {
	if !s.broken.TryAcquirePermit() {
		return nil, false
	}
	g := s.opts.Metrics.brokenCalls.WithLabelValues(string(s.opts.Kind))
	g.Inc()
	return func() {
		g.Dec()
		s.broken.ReleasePermit()
	}, true
}

// Find returns the target under key, if there is one.
func (s *Set) Find(key string) (*Target, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.targets[key]
	return t, ok
}

// A Request is one call to a target: Do makes it under the context it is
// given. A Read changes nothing at the target, so a first contact may let it
// finish after its caller stopped waiting (see firstcontact.go).
type Request struct {
	Do   func(context.Context) (*http.Response, error)
	Read bool
}

// A Guard runs one request through a target's circuits (see Target.Do).
type Guard func(ctx context.Context, r Request) (*http.Response, error)

// Guard returns the Guard of the target under key. It looks the target up on
// each call, which also keeps it from being pruned while in use.
func (s *Set) Guard(key, name string) Guard {
	return func(ctx context.Context, r Request) (*http.Response, error) {
		t, _, err := s.target(key, name, s.scopedCall(ctx))
		if err != nil {
			return nil, err
		}
		t.inFlight.Add(1)
		defer t.inFlight.Add(-1)
		return t.Do(ctx, r)
	}
}

// pruneLocked drops the targets forgettable after their idle time.
func (s *Set) pruneLocked(now time.Time) {
	for k, t := range s.targets {
		if s.forgettable(t, now.Sub(time.Unix(0, t.used.Load()))) {
			delete(s.targets, k)
			if t.scoped {
				s.scoped--
			}
			t.retire()
		}
	}
}

// forgettable tells whether a target nobody asked for in idle may be dropped.
// A healthy one whose last answer is no longer fresh holds nothing a new one
// would not (its next call is a first contact either way): runtimes polled
// minutes apart keep no circuits between their polls, which at thousands of
// runtimes is a large share of the process's memory. Without Fresh, a healthy
// one is kept two open periods (it knows its credentials were accepted); a
// failing one until its longest open period is surely over (its credentials
// were replaced, or the runtime is gone). None while a call is in flight.
func (s *Set) forgettable(t *Target, idle time.Duration) bool {
	if t.inFlight.Load() > 0 {
		return false
	}
	switch {
	case !t.healthy():
		return idle > s.opts.RejectedDelay+2*s.opts.MaxDelay
	case s.opts.Fresh > 0 && !t.known() && !t.probing():
		return idle > s.opts.Fresh
	default:
		return idle > 2*s.opts.MaxDelay
	}
}

// Target is one target's circuits: unreachable (no answer: timeouts, refused
// or reset connections, TLS failures; opens on one), server errors (5xx;
// opens after ServerErrorThreshold in a row) and, if the Set has Rejected,
// logon.
type Target struct {
	set  *Set
	name string
	// availability are the unreachable and server-error circuits.
	availability []*circuit
	// logon opens on one rejection of the credentials; nil without Rejected.
	logon circuitbreaker.CircuitBreaker[*http.Response]
	// policies are logon (if any) then availability, as failsafe composes them.
	policies []failsafe.Policy[*http.Response]

	// verified is set once the target answered the credentials without
	// rejecting them; until then calls go one at a time (verifying), so that
	// wrong credentials cost one failed logon, not one per waiting resource.
	verified  atomic.Bool
	verifying chan struct{}

	used     atomic.Int64 // unix nanoseconds of the last lookup
	inFlight atomic.Int32 // calls through Guard not yet returned
	// answered is when the target last answered (unix nanoseconds, 0: never);
	// probe is its first contact in flight, if any (see firstcontact.go).
	answered atomic.Int64
	probe    *probe       // guarded by mu
	nOpen    atomic.Int32 // circuits of this target not closed, for the gauge
	gone     atomic.Bool  // forgotten: its open circuits are no longer counted
	scoped   bool         // made for a scope other than the platform's (Set.scoped)
	mu       sync.Mutex
	cause    string // what the last failure was
	failed   time.Time
	// recalled is the failure a condition recorded (see recall.go), until a
	// call's outcome replaces it.
	recalled *Failure
	// last is the last failure (or refusal of a failing target) told to its resources.
	last *Error
}

// circuit is an availability circuit with the count of its openings in a
// row, for the doubling delay.
type circuit struct {
	circuitbreaker.CircuitBreaker[*http.Response]
	opens atomic.Int32
}

func newTarget(s *Set, name string) *Target {
	t := &Target{set: s, name: name, verifying: make(chan struct{}, 1)}
	t.used.Store(time.Now().UnixNano())
	if s.opts.Rejected != nil {
		t.logon = circuitbreaker.NewBuilder[*http.Response]().
			HandleIf(func(resp *http.Response, err error) bool { return err == nil && s.opts.Rejected(resp) }).
			WithFailureThreshold(1).
			WithSuccessThreshold(1).
			WithDelay(s.opts.RejectedDelay).
			OnStateChanged(t.changed).
			Build()
		t.policies = append(t.policies, t.logon)
	}
	t.availability = []*circuit{t.circuit(noAnswer, 1), t.circuit(serverError, s.opts.ServerErrorThreshold)}
	for _, c := range t.availability {
		t.policies = append(t.policies, c)
	}
	return t
}

func (t *Target) circuit(failed func(*http.Response, error) bool, threshold uint) *circuit {
	c := &circuit{}
	c.CircuitBreaker = circuitbreaker.NewBuilder[*http.Response]().
		HandleIf(failed).
		WithFailureThreshold(threshold).
		WithSuccessThreshold(1).
		WithDelayFunc(func(failsafe.ExecutionAttempt[*http.Response]) time.Duration { return t.nextDelay(&c.opens) }).
		WithJitterFactor(0.1).
		OnStateChanged(t.changed).
		OnClose(func(circuitbreaker.StateChangedEvent) { c.opens.Store(0) }).
		Build()
	return c
}

// nextDelay doubles the open period with each opening in a row, up to the cap.
func (t *Target) nextDelay(opens *atomic.Int32) time.Duration {
	n := opens.Add(1)
	d := t.set.opts.BaseDelay
	for i := int32(1); i < n && d < t.set.opts.MaxDelay; i++ {
		d *= 2
	}
	return min(d, t.set.opts.MaxDelay)
}

func (t *Target) changed(e circuitbreaker.StateChangedEvent) {
	switch {
	case e.OldState == circuitbreaker.ClosedState && e.NewState != circuitbreaker.ClosedState:
		t.opened()
	case e.OldState != circuitbreaker.ClosedState && e.NewState == circuitbreaker.ClosedState:
		t.closed()
	}
}

// opened and closed count the target's circuits (and a recalled failure)
// that are not closed, for the gauge.
func (t *Target) opened() {
	if t.nOpen.Add(1) == 1 && !t.gone.Load() {
		t.set.opts.Metrics.open.WithLabelValues(string(t.set.opts.Kind)).Inc()
	}
}

func (t *Target) closed() {
	if t.nOpen.Add(-1) == 0 && !t.gone.Load() {
		t.set.opts.Metrics.open.WithLabelValues(string(t.set.opts.Kind)).Dec()
	}
}

func (t *Target) retire() {
	if !t.gone.Swap(true) && t.nOpen.Load() > 0 {
		t.set.opts.Metrics.open.WithLabelValues(string(t.set.opts.Kind)).Dec()
	}
}

// healthy tells whether every circuit of the target is closed and no
// recalled failure stands.
func (t *Target) healthy() bool {
	if t.recalledFailure() != nil {
		return false
	}
	for _, c := range t.availability {
		if !c.IsClosed() {
			return false
		}
	}
	return t.logon == nil || t.logon.IsClosed()
}

// Call runs fn as one request that may change the target (see Do).
func (t *Target) Call(ctx context.Context, fn func() (*http.Response, error)) (*http.Response, error) {
	return t.Do(ctx, Request{Do: func(context.Context) (*http.Response, error) { return fn() }})
}

// Do runs one request to the target through its circuits. A failure the
// circuits count comes back as an *Error that names its cause and the next
// try; so does a request refused because a circuit is open, because too many
// calls to failing targets are in flight already, or because the target's
// first contact has not been answered yet. The next try is also handed to the
// retry hint in ctx, if any. The request's own answers, good or not, come back
// as they are.
func (t *Target) Do(ctx context.Context, r Request) (*http.Response, error) {
	if f := t.recalledFailure(); f != nil && time.Now().Before(f.Next) {
		return nil, t.refuseRecalled(ctx, f)
	}
	if t.open() {
		// Before any slot is taken: a resource of an open circuit comes back
		// when it half-opens, not when a slot may be free.
		return nil, t.refuse(ctx, refusedOpen)
	}
	healthy, contacts := t.healthy(), t.set.opts.Fresh > 0
	switch {
	case contacts && healthy && !t.known(), contacts && !healthy && r.Read:
		// A first contact (a target of unknown health), or a probe of a
		// failing one that is a read: it may go on without the worker.
		return t.firstContact(ctx, r)
	case !healthy:
		release, ok := t.set.holdWorker()
		if !ok {
			return nil, t.refuse(ctx, refusedBusy)
		}
		defer release()
	}
	return t.call(ctx, r.Do)
}

// open tells whether a circuit of the target is open and not yet due for its
// probe.
func (t *Target) open() bool {
	for _, c := range t.availability {
		if c.IsOpen() && c.RemainingDelay() > 0 {
			return true
		}
	}
	return t.logon != nil && t.logon.IsOpen() && t.logon.RemainingDelay() > 0
}

// call makes the request through the circuits (after the credentials are
// verified, if the Set checks them) and records its outcome.
func (t *Target) call(ctx context.Context, fn func(context.Context) (*http.Response, error)) (*http.Response, error) {
	if t.logon != nil && !t.verified.Load() {
		// Bounded: a tenant that hangs on its first call must not hold every
		// waiting worker for that call's timeout.
		wait := time.NewTimer(verifyWait)
		select {
		case t.verifying <- struct{}{}:
			wait.Stop()
		case <-wait.C:
			return nil, t.refuse(ctx, refusedPending)
		case <-ctx.Done():
			wait.Stop()
			return nil, ctx.Err()
		}
		if t.verified.Load() {
			<-t.verifying // verified while this call waited: no need to queue
		} else {
			defer func() { <-t.verifying }()
		}
	}
	var cause string
	resp, err := failsafe.With(t.policies...).Get(func() (*http.Response, error) {
		resp, err := fn(ctx)
		if unavailable(resp, err) || t.rejects(resp, err) {
			// Recorded before the circuits count the failure: a call refused
			// by a circuit it opens names the cause, not just "failing".
			cause = Cause(resp, err)
			t.mu.Lock()
			t.cause, t.failed = cause, time.Now()
			t.mu.Unlock()
		}
		return resp, err
	})
	rejected := t.rejects(resp, err)
	if t.logon != nil && err == nil && resp != nil && !rejected {
		t.verified.Store(true)
	}
	if err == nil && resp != nil && !serverError(resp, nil) {
		t.answered.Store(time.Now().UnixNano())
	}
	if !errors.Is(err, circuitbreaker.ErrOpen) {
		t.forget()
	}
	switch {
	case errors.Is(err, circuitbreaker.ErrOpen):
		return nil, t.refuse(ctx, refusedOpen)
	case rejected:
		return nil, t.failure(ctx, resp, cause, true)
	case unavailable(resp, err):
		return nil, t.failure(ctx, resp, cause, false)
	}
	return resp, err
}

// rejects tells whether the answer rejects the target's credentials.
func (t *Target) rejects(resp *http.Response, err error) bool {
	return t.logon != nil && err == nil && resp != nil && t.set.opts.Rejected(resp)
}

// failure returns the error of a failed call, whose cause call recorded.
func (t *Target) failure(ctx context.Context, resp *http.Response, cause string, rejected bool) error {
	if resp != nil {
		_ = resp.Body.Close()
	}
	e := &Error{Kind: t.set.opts.Kind, Target: t.name, Cause: cause, Rejected: rejected}
	if !t.healthy() {
		// Opened by this failure: the next try is known. Until then the
		// workqueue's own backoff retries.
		e.Next = t.next()
		t.hint(ctx, e)
	}
	t.rememberFailure(e)
	return e
}

// rememberFailure keeps the last failure the target's resources were told, for them to
// be told again, word for word, while its probe is out.
func (t *Target) rememberFailure(e *Error) {
	t.mu.Lock()
	t.last = e
	t.mu.Unlock()
}

// lastFailure is the last failure the target's resources were told, if any.
func (t *Target) lastFailure() *Error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

// recheckRejected bounds the wait of a resource whose credentials were
// rejected: no watch tells it that the credentials Secret changed, so it
// looks again this often (without calling the target while they are the same).
const recheckRejected = 30 * time.Second

// hint hands the next try to the reconcile's retry hint.
func (t *Target) hint(ctx context.Context, e *Error) {
	at := e.Next
	if e.Rejected {
		at = minTime(at, time.Now().Add(recheckRejected))
	}
	hintAt(ctx, at)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Why a call was not made.
type refusal int

const (
	refusedOpen         refusal = iota // a circuit is open, or half-open with its probe out
	refusedBusy                        // calls to failing targets hold every slot
	refusedPending                     // the target's first call has not been answered
	refusedFirstContact                // the target's first contact is in flight
	refusedProbing                     // the failing target's probe is in flight
)

// verifyWait bounds how long a call waits for the first call to a target with
// new credentials to be answered.
const verifyWait = time.Second

// refuse returns the error of a call not made.
func (t *Target) refuse(ctx context.Context, why refusal) error {
	t.set.opts.Metrics.refused.WithLabelValues(string(t.set.opts.Kind)).Inc()
	t.mu.Lock()
	cause := t.cause
	t.mu.Unlock()
	if cause == "" {
		cause = "failing"
	}
	e := &Error{Kind: t.set.opts.Kind, Target: t.name, Cause: cause, FailedFast: true, Busy: why == refusedBusy,
		Pending: why == refusedPending || why == refusedFirstContact, Rejected: t.logon != nil && !t.logon.IsClosed(), Next: t.next()}
	switch why {
	case refusedFirstContact:
		// The answer comes within the call's timeout, or the circuit opens.
		e.Next = t.pendingRetry()
		hintAnswerDue(ctx, e.Next)
		return e
	case refusedProbing:
		// What its resources were told last still holds, so they are told
		// it again, in the same words: no status changes while a probe is out.
		// They come back once its answer is surely in.
		hintAt(ctx, e.Next)
		if last := t.lastFailure(); last != nil {
			return last
		}
		return e
	case refusedOpen, refusedBusy:
		t.rememberFailure(e)
	}
	t.hint(ctx, e)
	return e
}

// next is when a call to the target may go out again: when its open circuit
// half-opens, or, while a probe or too many failing calls are in flight, a
// base delay from now. Spread a little, so that the resources of one target do
// not all come back at once.
func (t *Target) next() time.Time {
	var d time.Duration // jittered by the circuits already
	for _, c := range t.availability {
		d = max(d, c.RemainingDelay())
	}
	if t.logon != nil {
		d = max(d, t.logon.RemainingDelay())
	}
	if d <= 0 {
		d = t.set.opts.BaseDelay + rand.N(t.set.opts.BaseDelay/10+1)
	}
	return time.Now().Add(d)
}

// Rejected tells whether the target's logon circuit is open: it rejected the
// credentials, and they have not changed since. It returns when that happened.
func (t *Target) Rejected() (time.Time, bool) {
	if t.logon == nil || t.logon.IsClosed() {
		return time.Time{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed, true
}
