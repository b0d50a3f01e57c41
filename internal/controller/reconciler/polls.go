package reconciler

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

// PollBudget bounds how many routine polls per second all managed-resource
// controllers start together. It replaces crossplane-runtime's global reconcile
// limiter, which holds back every reconcile alike: behind it a new runtime, a
// deletion or a repair queued behind thousands of routine polls.
type PollBudget struct {
	limiter *rate.Limiter
}

// NewPollBudget allows perSecond polls per second on average.
func NewPollBudget(perSecond int) *PollBudget {
	return &PollBudget{limiter: rate.NewLimiter(rate.Limit(perSecond), max(perSecond, 1))}
}

// PollsLast wraps a managed reconciler so that its timed re-checks (results
// with RequeueAfter: polls, waits) are queued at low priority and spread within
// the budget, while anything an event or a retry brings is reconciled at once.
// A reconcile that met a failing target (see package breaker) is requeued, at
// low priority, for when that target's circuit lets a call through.
// The controller's priority queue serves ready items of higher priority first,
// so a change never waits behind routine polls.
//
// With a budget, a resource's first poll after the provider starts falls at a
// random point within the interval: a start observes every resource at once,
// and polls all due one interval later would be pushed back by the budget
// (20,000 resources at 100/s: 200s), and with them the drift they find.
func PollsLast(r reconcile.Reconciler, b *PollBudget) reconcile.Reconciler {
	var polled sync.Map // resources whose first poll is scheduled
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		// Calls are made for the resource's namespace: first contacts and
		// circuits of other namespaces than the platform's are bounded together.
		ctx, retryAt := breaker.WithRetryHint(breaker.WithScope(ctx, req.Namespace))
		res, err := r.Reconcile(ctx, req)
		// A reconcile that kept its resource's status while a first
		// contact's answer is out comes back when the answer is due, too.
		if h := retryAt(); err == nil && (res.Requeue || h.AnswerDue) && !h.At.IsZero() {
			// A target failed or is known to: try again when its circuit lets a
			// call through, behind other work, not at the workqueue's backoff.
			// One that only waits for a first contact's answer (a new runtime,
			// most likely) is in the middle of a change: not behind other work.
			retry := reconcile.Result{RequeueAfter: max(time.Until(h.At), time.Millisecond)}
			if !h.AnswerDue {
				retry.Priority = ptr.To(handler.LowPriority)
			}
			return retry, nil
		}
		if err == nil && !res.Requeue && res.RequeueAfter <= 0 {
			// Done, as for a resource that is gone.
			polled.Delete(req)
		}
		if err != nil || res.RequeueAfter <= 0 {
			return res, err
		}
		if b != nil {
			if _, seen := polled.LoadOrStore(req, struct{}{}); !seen {
				res.RequeueAfter = time.Duration(rand.Int64N(int64(res.RequeueAfter))) + 1
			}
			// Reserve the poll's slot at the time it falls due: no worker waits
			// for it, the poll is only scheduled later when the budget is spent.
			at := time.Now().Add(res.RequeueAfter)
			if rsv := b.limiter.ReserveN(at, 1); rsv.OK() {
				res.RequeueAfter += rsv.DelayFrom(at)
			}
		}
		res.Priority = ptr.To(handler.LowPriority)
		return res, nil
	})
}
