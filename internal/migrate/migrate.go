// Package migrate hands the runtimes of a running eventing-auth-manager over to
// provider-eventing-auth without changing any runtime's credentials: the
// provider takes over each existing IAS app and its existing client secret.
package migrate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// The old operator's shape (DESIGN.md, "Migrating from eventing-auth-manager").
var OperatorEventingAuthGroupVersionKind = schema.GroupVersionKind{Group: "operator.kyma-project.io", Version: "v1alpha1", Kind: "EventingAuth"}

const (
	// OperatorFinalizer is the old operator's finalizer on its EventingAuths.
	OperatorFinalizer = "eventingauth.operator.kyma-project.io/finalizer"
	// OperatorSecretDescription marks the api secrets the old operator made.
	OperatorSecretDescription = "eventing-auth-manager"
)

// fieldOwner owns what the migration applies to an EventingAuth.
const fieldOwner = "eventing-auth-migrate"

// Outcome says what happened to one runtime.
type Outcome string

// Outcomes, in the order a runtime passes through them.
const (
	WouldPrepare Outcome = "would prepare"
	Prepared     Outcome = "prepared"
	Waiting      Outcome = "waiting"
	WouldFinish  Outcome = "would finish"
	Completed    Outcome = "completed"
	LeftAlone    Outcome = "left alone"
)

// Result is what happened to one runtime and why.
type Result struct {
	Runtime string
	Outcome Outcome
	Detail  string
}

// RuntimeClients makes a client of a runtime from its kubeconfig; satisfied by
// the provider's runtime client cache.
type RuntimeClients interface {
	For(kubeconfig []byte) (corev1client.CoreV1Interface, error)
}

// Options of a migration.
type Options struct {
	// Kube is the management cluster.
	Kube client.Client
	// IAS is the tenant the provider uses.
	IAS ias.Client
	// Runtimes makes clients of runtimes from their kubeconfigs.
	Runtimes RuntimeClients
	// Namespace holds the Kyma CRs, EventingAuths and kubeconfig Secrets.
	Namespace string
	// Operator is where the old operator shows that it runs; while it runs,
	// or while that cannot be told, nothing is done.
	Operator OperatorSigns
	// SkipOperatorCheck runs without looking whether the old operator runs.
	SkipOperatorCheck bool
	// Recheck is how often, at most, the operator is looked for again before
	// a change; default 2 seconds.
	Recheck time.Duration
	// DryRun reports what would be done and changes nothing.
	DryRun bool
	// Wait is how long to wait for prepared runtimes to become Ready; zero
	// reports them as waiting, to be finished by a later run.
	Wait time.Duration
	// Interval between looks at runtimes that wait.
	Interval time.Duration
	// Report, if set, is told each runtime's final result as it is known.
	Report func(Result)
	// GlobalAccount is what eventing-auth-manager sent as every app's
	// globalAccount (its --ias-global-account-id); nil leaves the
	// ClusterProviderConfig as it is.
	GlobalAccount *string
	// ProviderConfig is the ClusterProviderConfig the provider uses.
	ProviderConfig string
	// Said, if set, is told what the run did beside the runtimes.
	Said func(string)
}

// Run migrates every runtime the old operator manages and returns the result
// of each. Every step derives from what the clusters and IAS hold, so a run
// that was interrupted is continued by running again.
func Run(ctx context.Context, o Options) ([]Result, error) {
	var guard *operatorGuard
	if !o.SkipOperatorCheck {
		if err := operatorStopped(ctx, o.Kube, o.Operator, time.Now()); err != nil {
			return nil, err
		}
		guard = &operatorGuard{kube: o.Kube, signs: o.Operator, every: cmp.Or(o.Recheck, 2*time.Second), now: time.Now, last: time.Now()}
	}
	said, err := carryGlobalAccount(ctx, o)
	if err != nil {
		return nil, err
	}
	if said != "" && o.Said != nil {
		o.Said(said)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(OperatorEventingAuthGroupVersionKind.GroupVersion().WithKind("EventingAuthList"))
	if err := o.Kube.List(ctx, list, client.InNamespace(o.Namespace)); err != nil {
		return nil, fmt.Errorf("cannot list eventing-auth-manager's EventingAuths in %s: %w", o.Namespace, err)
	}
	return eachUntilSettled(ctx, o, list.Items, func(ctx context.Context, old *unstructured.Unstructured) (Result, error) {
		return migrateOne(ctx, o, guard, old)
	})
}

// eachUntilSettled takes each runtime of items, in the order of their names,
// a step further, again every o.Interval while any is prepared or waiting,
// until o.Wait has passed (once in a dry run), and reports the results. An
// error from step stops the run.
func eachUntilSettled(ctx context.Context, o Options, items []unstructured.Unstructured, step func(context.Context, *unstructured.Unstructured) (Result, error)) ([]Result, error) {
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	interval := o.Interval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	results := make([]Result, len(items))
	deadline := time.Now().Add(o.Wait)
	for {
		pending := 0
		for i := range items {
			if r := results[i]; r.Outcome != "" && r.Outcome != Waiting && r.Outcome != Prepared {
				continue
			}
			r, err := step(ctx, &items[i])
			if err != nil {
				report(o, results)
				return results, err
			}
			results[i] = r
			if r.Outcome == Waiting || r.Outcome == Prepared {
				pending++
			}
		}
		if pending == 0 || o.DryRun || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return results, ctx.Err()
		case <-time.After(interval):
		}
	}
	report(o, results)
	return results, nil
}

// report tells o.Report each runtime's result known so far.
func report(o Options, results []Result) {
	if o.Report == nil {
		return
	}
	for _, r := range results {
		if r.Runtime != "" {
			o.Report(r)
		}
	}
}

// migrateOne takes one runtime one step further: prepare it, or, once the
// provider shows it Ready, finish it. Before either change it looks again
// whether the operator came back; if it did, the error stops the run.
func migrateOne(ctx context.Context, o Options, guard *operatorGuard, old *unstructured.Unstructured) (Result, error) {
	id := old.GetName()
	s, why, err := inspect(ctx, o, old)
	switch {
	case err != nil:
		return Result{Runtime: id, Outcome: Waiting, Detail: err.Error()}, nil
	case why != "":
		return Result{Runtime: id, Outcome: LeftAlone, Detail: why}, nil
	case s.served:
		return finishServed(ctx, o, guard, s)
	}
	if !s.prepared() {
		if o.DryRun {
			return Result{Runtime: id, Outcome: WouldPrepare, Detail: s.plan()}, nil
		}
		if err := guard.stillStopped(ctx); err != nil {
			return Result{}, err
		}
		if err := s.prepare(ctx, o); err != nil {
			return Result{Runtime: id, Outcome: Waiting, Detail: err.Error()}, nil
		}
		return Result{Runtime: id, Outcome: Prepared, Detail: s.plan()}, nil
	}
	if waitingFor := s.readiness(ctx, o); waitingFor != "" {
		return Result{Runtime: id, Outcome: Waiting, Detail: "prepared; waiting for " + waitingFor}, nil
	}
	if o.DryRun {
		return Result{Runtime: id, Outcome: WouldFinish, Detail: "the provider shows it Ready; would remove eventing-auth-manager's EventingAuth"}, nil
	}
	if err := guard.stillStopped(ctx); err != nil {
		return Result{}, err
	}
	if err := s.finish(ctx, o); err != nil {
		return Result{Runtime: id, Outcome: Waiting, Detail: err.Error()}, nil
	}
	return Result{Runtime: id, Outcome: Completed, Detail: fmt.Sprintf("IAS application %s and client secret %s… taken over; eventing-auth-manager's EventingAuth removed", s.app.ID, s.secret.Hint)}, nil
}

// finishServed takes a runtime that the provider serves itself, with an app
// and a secret of its own (the kyma bridge made its EventingAuth before any
// migration: a runtime the operator had not served, failed on, or whose
// Secret did not fit), the rest of the way. Once its IASApplication is Ready,
// the operator's Secret on the runtime, which the provider leaves alone as not
// its own, gets the provider's labels, so that the provider writes its
// credentials there; once the provider shows the runtime Ready,
// eventing-auth-manager's EventingAuth is removed. A resource whose Synced
// condition fails needs a person: the runtime is left alone with its message.
func finishServed(ctx context.Context, o Options, guard *operatorGuard, s *state) (Result, error) {
	const served = "served by the provider with an app and a secret of its own"
	id := s.id
	app, rs, waitingFor, failed := s.servedResources(ctx, o)
	switch {
	case failed != "":
		return Result{Runtime: id, Outcome: LeftAlone, Detail: served + ", but " + failed + "; fix that and run again"}, nil
	case app == nil:
		return Result{Runtime: id, Outcome: Waiting, Detail: served + "; waiting for " + waitingFor}, nil
	}
	if s.onRuntime != nil && !s.labelled() {
		const plan = "label the runtime's Secret (data unchanged) so that the provider, which serves the runtime with an app and a secret of its own, writes its credentials there: the runtime's eventing subscribes again once"
		if o.DryRun {
			return Result{Runtime: id, Outcome: WouldPrepare, Detail: plan}, nil
		}
		if err := guard.stillStopped(ctx); err != nil {
			return Result{}, err
		}
		if err := s.label(ctx); err != nil {
			return Result{Runtime: id, Outcome: Waiting, Detail: err.Error()}, nil
		}
		return Result{Runtime: id, Outcome: Prepared, Detail: plan}, nil
	}
	if rs == nil {
		return Result{Runtime: id, Outcome: Waiting, Detail: served + "; waiting for " + waitingFor}, nil
	}
	if o.DryRun {
		return Result{Runtime: id, Outcome: WouldFinish, Detail: "the provider serves it and shows it Ready; would remove eventing-auth-manager's EventingAuth"}, nil
	}
	if err := guard.stillStopped(ctx); err != nil {
		return Result{}, err
	}
	if err := s.removeOld(ctx, o); err != nil {
		return Result{Runtime: id, Outcome: Waiting, Detail: err.Error()}, nil
	}
	return Result{Runtime: id, Outcome: Completed, Detail: served + "; eventing-auth-manager's EventingAuth removed"}, nil
}
