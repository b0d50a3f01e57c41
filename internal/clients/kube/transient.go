package kube

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createdRecently bounds how long after its creation succeeded a managed
// resource's Creating status counts as the one crossplane-runtime writes right
// after the Create.
const createdRecently = time.Minute

// SkipTransientStatus wraps a client so that the two status writes
// crossplane-runtime's managed reconciler makes of an instant are not sent:
// Creating right after a Create succeeded, and Deleting right after a Delete
// succeeded. Each is followed at once by a requeue whose reconcile writes the
// outcome (Available, or the finalizer removed and the resource gone), or an
// error, which is sent. Each cost a write, a watch event for every reader of
// the kind and a wake of the controllers watching its readiness, per runtime
// at bring-up and again at deletion. A crash between the two reconciles leaves
// what a status write lost to a conflict leaves, which the next Observe
// recovers from the external name and the connection Secret, recorded before.
func SkipTransientStatus(c client.Client) client.Client {
	return &transientSkipping{Client: c}
}

type transientSkipping struct{ client.Client }

func (c *transientSkipping) Status() client.SubResourceWriter {
	return transientWriter{SubResourceWriter: c.Client.Status()}
}

type transientWriter struct{ client.SubResourceWriter }

func (w transientWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if len(opts) == 0 && transient(obj) {
		return nil
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

// transient tells whether obj's status is one the managed reconciler writes
// right before it requeues at once: synced, and Ready is crossplane-runtime's
// own Creating after a creation that just succeeded, or its own Deleting of a
// resource being deleted. Conditions with a message are the provider's and
// say something a user should see.
func transient(obj client.Object) bool {
	mg, ok := obj.(resource.Managed)
	if !ok {
		return false
	}
	synced, ready := mg.GetCondition(xpv2.TypeSynced), mg.GetCondition(xpv2.TypeReady)
	if synced.Status != corev1.ConditionTrue || synced.Reason != xpv2.ReasonReconcileSuccess ||
		ready.Status != corev1.ConditionFalse || ready.Message != "" {
		return false
	}
	switch ready.Reason {
	case xpv2.ReasonCreating:
		return meta.ExternalCreateSucceededDuring(mg, createdRecently) && !meta.WasDeleted(mg)
	case xpv2.ReasonDeleting:
		return meta.WasDeleted(mg)
	}
	return false
}
