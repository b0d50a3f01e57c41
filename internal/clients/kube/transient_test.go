package kube

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
)

// statusCounting counts the status updates that reach it.
type statusCounting struct {
	client.Client
	writes *int
}

func (c statusCounting) Status() client.SubResourceWriter { return countingWriter{writes: c.writes} }

type countingWriter struct {
	client.SubResourceWriter
	writes *int
}

func (w countingWriter) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	*w.writes++
	return nil
}

func TestSkipTransientStatus(t *testing.T) {
	deleted := metav1.NewTime(time.Now())
	app := func(created time.Duration, deleting bool, conditions ...xpv2.Condition) *iasv1alpha1.IASApplication {
		a := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}}
		if created > 0 {
			meta.SetExternalCreateSucceeded(a, time.Now().Add(-created))
		}
		if deleting {
			a.SetDeletionTimestamp(&deleted)
		}
		a.SetConditions(conditions...)
		return a
	}
	failed := xpv2.ReconcileError(context.DeadlineExceeded)
	held := xpv2.Deleting().WithMessage("waiting for RuntimeSecret rs to be deleted")
	held.Reason = "WaitingForRuntimeSecrets"
	cases := map[string]struct {
		reason    string
		obj       client.Object
		wantWrite bool
	}{
		"CreatingRightAfterACreateIsNotSent": {
			reason: "Creating right after a Create is replaced by Available a moment later: one write less",
			obj:    app(time.Second, false, xpv2.Creating(), xpv2.ReconcileSuccess()),
		},
		"DeletingOfAResourceBeingDeletedIsNotSent": {
			reason: "Deleting of a resource on its way out is read by nobody",
			obj:    app(time.Hour, true, xpv2.Deleting(), xpv2.ReconcileSuccess()),
		},
		"CreatingLongAfterTheCreateIsSent": {
			reason:    "a Creating that lasts tells a person something",
			obj:       app(2*createdRecently, false, xpv2.Creating(), xpv2.ReconcileSuccess()),
			wantWrite: true,
		},
		"CreatingWithoutACreateIsSent": {
			reason:    "so does one without a Create",
			obj:       app(0, false, xpv2.Creating(), xpv2.ReconcileSuccess()),
			wantWrite: true,
		},
		"CreatingWithAnErrorIsSent": {
			reason:    "an error is always written",
			obj:       app(time.Second, false, xpv2.Creating(), failed),
			wantWrite: true,
		},
		"CreatingWithAMessageIsSent": {
			reason:    "the provider's own Creating says what it does; a user should see it",
			obj:       app(time.Second, false, xpv2.Creating().WithMessage("Creating Secret s on runtime r"), xpv2.ReconcileSuccess()),
			wantWrite: true,
		},
		"DeletingWithAnErrorIsSent": {
			reason:    "an error of a deletion is written",
			obj:       app(time.Hour, true, xpv2.Deleting(), failed),
			wantWrite: true,
		},
		"DeletingOfAResourceNotBeingDeletedIsSent": {
			reason:    "Deleting of a resource not being deleted is news",
			obj:       app(time.Hour, false, xpv2.Deleting(), xpv2.ReconcileSuccess()),
			wantWrite: true,
		},
		"AHeldDeletionIsSent": {
			reason:    "a held deletion says what it waits for",
			obj:       app(time.Hour, true, held, xpv2.ReconcileSuccess()),
			wantWrite: true,
		},
		"AvailableIsSent": {
			reason:    "Available is written",
			obj:       app(time.Second, false, xpv2.Available(), xpv2.ReconcileSuccess()),
			wantWrite: true,
		},
		"NotAManagedResourceIsSent": {
			reason:    "other objects pass unchanged",
			obj:       &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}},
			wantWrite: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			writes := 0
			c := SkipTransientStatus(statusCounting{writes: &writes})
			if err := c.Status().Update(context.Background(), tc.obj); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if got := writes == 1; got != tc.wantWrite {
				t.Errorf("%s\nstatus written %d times, want written: %v", tc.reason, writes, tc.wantWrite)
			}
		})
	}
}
