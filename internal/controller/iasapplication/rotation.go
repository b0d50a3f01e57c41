package iasapplication

import (
	"context"
	"errors"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// TypeRotation is the condition that says how the last rotation of a client
// secret within rotateBefore went: IAS sends no expiry notice, and a secret
// that expires unrotated breaks event delivery on every runtime using it.
const TypeRotation xpv2.ConditionType = "SecretRotated"

// rotate replaces a secret due for rotation (st.rotate says why) and records
// the outcome: the SecretRotated condition, a Warning event on failure, and the
// rotation metrics. A rotation that waits for an older secret to retire is
// neither done nor failed.
func (k *secretKeeper) rotate(ctx context.Context, cr *v1alpha1.IASApplication, app *ias.Application, st *secretState) (managed.ConnectionDetails, error) {
	cd, err := k.replace(ctx, cr, app, st)
	c := xpv2.Condition{Type: TypeRotation, LastTransitionTime: metav1.Now()}
	switch {
	case err != nil:
		msg := fmt.Sprintf("Cannot rotate: %s; the published secret stays valid until then: %v", st.rotate, err)
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, reasonRotationFailed, msg
		k.recorder.Event(cr, event.Warning(eventRotationFailed, errors.New(msg)))
		k.metrics.Rotated(err)
	case cd == nil:
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, reasonRotationWaits,
			fmt.Sprintf("Rotation waits: %s, but an older secret is still retiring", st.rotate)
	default:
		c.Status, c.Reason = corev1.ConditionTrue, reasonRotated
		k.metrics.Rotated(nil)
	}
	if old := cr.GetCondition(TypeRotation); old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message {
		cr.SetConditions(c)
	}
	return cd, err
}
