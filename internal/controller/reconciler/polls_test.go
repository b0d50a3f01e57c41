package reconciler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

func TestPollsLast(t *testing.T) {
	boom := errors.New("boom")
	cases := map[string]struct {
		reason   string
		inner    reconcile.Result
		err      error
		priority *int
		requeue  time.Duration
	}{
		"Poll": {
			reason: "a poll waits behind work caused by a change",
			inner:  reconcile.Result{RequeueAfter: time.Minute}, priority: ptr.To(handler.LowPriority), requeue: time.Minute,
		},
		"ImmediateRequeue": {
			reason: "an immediate requeue is work to finish, not a poll",
			inner:  reconcile.Result{Requeue: true},
		},
		"Error": {
			reason: "so is a retry after an error",
			inner:  reconcile.Result{}, err: boom,
		},
		"Done": {
			reason: "a reconcile that asks for nothing gets nothing",
			inner:  reconcile.Result{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := PollsLast(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return tc.inner, tc.err }), nil)
			got, err := r.Reconcile(context.Background(), reconcile.Request{})
			if !errors.Is(err, tc.err) {
				t.Fatalf("%s\nerror %v, want %v", tc.reason, err, tc.err)
			}
			if (got.Priority == nil) != (tc.priority == nil) || got.Priority != nil && *got.Priority != *tc.priority {
				t.Errorf("%s\npriority %v, want %v", tc.reason, got.Priority, tc.priority)
			}
			if got.RequeueAfter != tc.requeue {
				t.Errorf("%s\nRequeueAfter %s, want %s", tc.reason, got.RequeueAfter, tc.requeue)
			}
		})
	}
}

// TestPollBudgetSpreadsPolls: polls falling due together beyond the budget are
// scheduled later, one budget slot apart, instead of all at once.
func TestPollBudgetSpreadsPolls(t *testing.T) {
	b := NewPollBudget(10)
	r := PollsLast(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	}), b)
	// Each resource's first poll after a start falls anywhere in the interval.
	first, _ := r.Reconcile(context.Background(), reconcile.Request{})
	if first.RequeueAfter <= 0 || first.RequeueAfter > time.Minute+time.Second {
		t.Fatalf("the first poll is due after %s, want within the minute", first.RequeueAfter)
	}
	var last time.Duration
	for i := range 30 {
		got, _ := r.Reconcile(context.Background(), reconcile.Request{})
		if i < 10 && got.RequeueAfter > time.Minute+time.Second {
			t.Errorf("poll %d within the burst was delayed to %s", i, got.RequeueAfter)
		}
		last = got.RequeueAfter
	}
	// 31 polls at 10/s with a burst of 10: the last about 2s after the minute.
	if last < time.Minute+1500*time.Millisecond || last > time.Minute+2500*time.Millisecond {
		t.Errorf("the 30th poll is due after %s, want about 1m2s", last)
	}
}

// TestFirstPollsSpreadOverTheInterval: after a start, resources observed at
// once have their next polls spread over the interval, not all at its end.
func TestFirstPollsSpreadOverTheInterval(t *testing.T) {
	r := PollsLast(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	}), NewPollBudget(1000))
	var early, late int
	for i := range 400 {
		req := reconcile.Request{NamespacedName: types.NamespacedName{Name: fmt.Sprint(i)}}
		got, _ := r.Reconcile(context.Background(), req)
		switch {
		case got.RequeueAfter > time.Minute+time.Second:
			t.Fatalf("a first poll was pushed past the interval: %s", got.RequeueAfter)
		case got.RequeueAfter < 30*time.Second:
			early++
		default:
			late++
		}
		again, _ := r.Reconcile(context.Background(), req)
		if again.RequeueAfter < time.Minute {
			t.Fatalf("a second poll came early: %s", again.RequeueAfter)
		}
	}
	if early < 120 || late < 120 {
		t.Errorf("first polls %d in the first half of the interval, %d in the second; want them spread", early, late)
	}
}

// TestPollsLastRetriesForTargets: a reconcile refused by a failing runtime is
// retried when its circuit is due, behind other work; one that only waits
// for a first contact's answer (a new runtime) is retried soon, not behind it,
// and so is one that kept its resource's status meanwhile and asked for its
// next poll only.
func TestPollsLastRetriesForTargets(t *testing.T) {
	hangs := breaker.Request{Read: true, Do: func(ctx context.Context) (*http.Response, error) {
		time.Sleep(time.Second)
		return nil, context.DeadlineExceeded
	}}
	// behindFirstContact: another runtime's first contact holds the only
	// slot, so the runtime's own call waits for that answer.
	behindFirstContact := func(set *breaker.Set) func(ctx context.Context) {
		go func() { _, _ = set.Target("other", "other").Do(context.Background(), hangs) }()
		time.Sleep(2 * breaker.FirstContactGrace)
		return func(ctx context.Context) { _, _ = set.Target("rt", "rt").Do(ctx, hangs) }
	}
	cases := map[string]struct {
		reason string
		call   func(set *breaker.Set) func(ctx context.Context)
		// result is what the reconcile returns; default Requeue.
		result   *reconcile.Result
		priority *int
		within   time.Duration
	}{
		"FailingRuntime": {
			reason: "a failing runtime is retried when its circuit is due, behind other work",
			call: func(set *breaker.Set) func(ctx context.Context) {
				_, _ = set.Target("rt", "rt").Do(context.Background(), breaker.Request{Do: func(context.Context) (*http.Response, error) { return nil, syscall.ECONNREFUSED }})
				return func(ctx context.Context) { _, _ = set.Target("rt", "rt").Do(ctx, hangs) }
			},
			priority: ptr.To(handler.LowPriority), within: 6 * time.Second,
		},
		"FirstContactOut": {
			reason: "a new runtime that only waits for another's first contact is retried soon",
			call:   behindFirstContact,
			within: 2 * time.Second,
		},
		"FirstContactOutStatusKept": {
			reason: "a Ready runtime whose first contact is out keeps its status and is retried when the answer is due, not at its next poll",
			call:   behindFirstContact,
			result: &reconcile.Result{RequeueAfter: 5 * time.Minute},
			within: 2 * time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			set := breaker.NewSet(breaker.Options{Kind: breaker.Runtime, BrokenCalls: 1, Fresh: time.Minute})
			call := tc.call(set)
			r := PollsLast(reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
				call(ctx)
				if tc.result != nil {
					return *tc.result, nil
				}
				return reconcile.Result{Requeue: true}, nil
			}), nil)
			got, err := r.Reconcile(context.Background(), reconcile.Request{})
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if (got.Priority == nil) != (tc.priority == nil) {
				t.Errorf("%s\npriority %v, want %v", tc.reason, got.Priority, tc.priority)
			}
			if got.RequeueAfter <= 0 || got.RequeueAfter > tc.within {
				t.Errorf("%s\nRequeueAfter %s, want within %s", tc.reason, got.RequeueAfter, tc.within)
			}
		})
	}
}
