package breaker

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func firstContactSet(fresh time.Duration) *Set {
	return NewSet(Options{Kind: Runtime, BaseDelay: time.Second, MaxDelay: 2 * time.Second, BrokenCalls: 2, Fresh: fresh})
}

// read is a Read request that returns what fn returns.
func read(fn func() (*http.Response, error)) Request {
	return Request{Read: true, Do: func(context.Context) (*http.Response, error) { return fn() }}
}

// TestFirstContactsHoldFewWorkers: ten workers each call a different runtime
// nobody has called yet, and every one hangs. At most two workers stay on
// them past the grace; the others return at once, saying the runtime has not
// answered yet, and their calls go on without them.
func TestFirstContactsHoldFewWorkers(t *testing.T) {
	set := firstContactSet(time.Minute)
	release := make(chan struct{})
	var started atomic.Int32
	hangs := read(func() (*http.Response, error) {
		started.Add(1)
		<-release
		return nil, context.DeadlineExceeded
	})
	var back atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			_, err := set.Target(strconv.Itoa(i), "rt-"+strconv.Itoa(i)).Do(context.Background(), hangs)
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("worker %d: got %v, want a breaker error", i, err)
			}
			back.Add(1)
		})
	}
	time.Sleep(3 * FirstContactGrace)
	if n := back.Load(); n < 8 {
		t.Fatalf("%d of 10 workers are back after three graces, want at least 8", n)
	}
	if n := started.Load(); n != 10 {
		t.Fatalf("%d first contacts went out, want 10 (the detached ones too)", n)
	}
	if held := testutil.ToFloat64(set.opts.Metrics.brokenCalls.WithLabelValues("runtime")); held > 2 {
		t.Fatalf("%v workers held by first contacts, want at most 2", held)
	}
	close(release)
	wg.Wait()
	// The detached first contacts end on their own, after the workers.
	inFlight := set.opts.Metrics.firstContacts.WithLabelValues("runtime")
	for deadline := time.Now().Add(5 * time.Second); testutil.ToFloat64(inFlight) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%v first contacts still in flight 5s after their runtimes answered", testutil.ToFloat64(inFlight))
		}
	}
	// Every detached answer taught its circuit: the runtimes are failing now.
	for i := range 10 {
		_, err := set.Target(strconv.Itoa(i), "rt-"+strconv.Itoa(i)).Do(context.Background(), read(answer(200)))
		var e *Error
		if !errors.As(err, &e) || !e.FailedFast || e.Cause != "timeout" {
			t.Fatalf("runtime %d after its first contact timed out: got %v, want a fast failure naming the timeout", i, err)
		}
	}
}

// TestFirstContact walks one target through first contacts: what the caller
// gets, and whether the target is known healthy afterwards.
func TestFirstContact(t *testing.T) {
	type step struct {
		wait time.Duration
		req  Request
		// busy takes both first-contact slots while the step runs.
		busy    bool
		called  bool
		pending bool // the caller got "has not answered a first call yet"
		fails   bool // the caller got another breaker error
	}
	slow := func(d time.Duration, code int) func() (*http.Response, error) {
		return func() (*http.Response, error) { time.Sleep(d); return answer(code)() }
	}
	write := func(fn func() (*http.Response, error)) Request {
		return Request{Do: func(context.Context) (*http.Response, error) { return fn() }}
	}
	cases := map[string][]step{
		"a quick answer comes back and makes the target known": {
			{req: read(answer(200)), busy: true, called: true},
			{req: write(answer(200)), busy: true, called: true},
		},
		"a slow answer without a slot goes on alone; the next call finds the target known": {
			{req: read(slow(3*FirstContactGrace, 200)), busy: true, called: true, pending: true},
			{wait: 4 * FirstContactGrace, req: read(answer(200)), busy: true, called: true},
		},
		"a slow answer with a slot free is waited for": {
			{req: read(slow(3*FirstContactGrace, 200)), called: true},
		},
		"a write to an unknown target without a slot is not started": {
			{req: write(answer(200)), busy: true, pending: true},
			{req: read(answer(200)), called: true},
			{req: write(answer(200)), busy: true, called: true},
		},
		"a detached failure teaches the circuit": {
			{req: read(func() (*http.Response, error) { time.Sleep(2 * FirstContactGrace); return nil, syscall.ECONNREFUSED }), busy: true, called: true, pending: true},
			{wait: 3 * FirstContactGrace, req: read(answer(200)), fails: true},
		},
		"knowledge goes stale": {
			{req: read(answer(200)), called: true},
			{wait: 300 * time.Millisecond, req: write(answer(200)), busy: true, pending: true},
		},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			set := firstContactSet(250 * time.Millisecond)
			target := set.Target("k", "rt")
			for i, s := range steps {
				time.Sleep(s.wait)
				if s.busy {
					for !set.broken.TryAcquirePermit() {
					}
					for !set.broken.TryAcquirePermit() {
					}
				}
				var called atomic.Bool
				r := s.req
				do := r.Do
				r.Do = func(ctx context.Context) (*http.Response, error) { called.Store(true); return do(ctx) }
				resp, err := target.Do(context.Background(), r)
				if s.busy {
					set.broken.ReleasePermit()
					set.broken.ReleasePermit()
				}
				var e *Error
				isErr := errors.As(err, &e)
				switch {
				case called.Load() != s.called:
					t.Fatalf("step %d: called %v, want %v", i, called.Load(), s.called)
				case s.pending && (!isErr || !e.Pending):
					t.Fatalf("step %d: got %v, want a pending first contact", i, err)
				case s.fails && (!isErr || e.Pending):
					t.Fatalf("step %d: got %v, want the target failing", i, err)
				case !s.pending && !s.fails && err != nil:
					t.Fatalf("step %d: %v", i, err)
				case err == nil:
					_ = resp.Body.Close()
				}
			}
		})
	}
}

// TestTargetsOfKnownHealthMakeNoFirstContact: a Set without Fresh (IAS
// tenants) calls every target directly.
func TestTargetsOfKnownHealthMakeNoFirstContact(t *testing.T) {
	set := NewSet(Options{Kind: Tenant, BrokenCalls: 1})
	for !set.broken.TryAcquirePermit() {
	}
	resp, err := set.Target("k", "t").Do(context.Background(), Request{Do: func(context.Context) (*http.Response, error) { return answer(200)() }})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
}

// TestProbeOfFailingTarget: while a runtime's circuit is open its calls are
// refused at once, saying until when, even with every slot held; once due,
// its probe (a read) goes on without the worker when no slot is free, and
// the resource meanwhile names the cause it knows.
func TestProbeOfFailingTarget(t *testing.T) {
	set := NewSet(Options{Kind: Runtime, BaseDelay: 50 * time.Millisecond, MaxDelay: time.Second, BrokenCalls: 1, Fresh: time.Minute})
	target := set.Target("k", "rt")
	if _, err := target.Do(context.Background(), read(fail(syscall.ECONNREFUSED))); err == nil {
		t.Fatal("a refused connection passed")
	}
	for !set.broken.TryAcquirePermit() {
	}
	defer set.broken.ReleasePermit()

	called := false
	_, err := target.Do(context.Background(), read(func() (*http.Response, error) { called = true; return answer(200)() }))
	var e *Error
	if called || !errors.As(err, &e) || e.Busy || !e.FailedFast || e.Cause != "connection refused" {
		t.Fatalf("while open: called %v, %v; want refused at once naming the cause, not busy", called, err)
	}

	time.Sleep(70 * time.Millisecond)
	start := time.Now()
	var probed atomic.Bool
	done := make(chan struct{})
	_, err = target.Do(context.Background(), read(func() (*http.Response, error) {
		probed.Store(true)
		time.Sleep(3 * FirstContactGrace)
		return nil, context.DeadlineExceeded
	}))
	if waited := time.Since(start); !probed.Load() || waited > 2*FirstContactGrace {
		t.Fatalf("the due probe: made %v, the worker waited %s; want it made, the worker back after the grace", probed.Load(), waited)
	}
	if !errors.As(err, &e) || e.Pending || e.Busy || e.Cause != "connection refused" {
		t.Fatalf("while probing: %v; want the known cause", err)
	}
	go func() {
		for !target.open() {
			time.Sleep(time.Millisecond)
		}
		close(done)
	}()
	<-done
	_, err = target.Do(context.Background(), read(answer(200)))
	if !errors.As(err, &e) || e.Cause != "timeout" {
		t.Fatalf("after the probe timed out: %v; want the circuit open on the timeout", err)
	}
}
