package runtimesecret

import (
	"context"
	"fmt"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
)

// keep is what a RuntimeSecret's retained deletion keeps: the Secret on the
// runtime, which stays labelled as the provider's, so that the RuntimeSecret
// made again takes it up without a write.
var keep = reconciler.Keep[*v1alpha1.RuntimeSecret]{
	Kind:      v1alpha1.RuntimeSecretKind,
	CRD:       "runtimesecrets." + v1alpha1.Group,
	RuntimeID: func(cr *v1alpha1.RuntimeSecret) string { return cr.Spec.ForProvider.RuntimeID },
	Release: func(_ context.Context, cr *v1alpha1.RuntimeSecret) (string, error) {
		ns, name := cr.TargetSecret()
		return fmt.Sprintf("Secret %s/%s on runtime %s", ns, name, cr.Spec.ForProvider.RuntimeID), nil
	},
}
