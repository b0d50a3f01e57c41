package reconciler

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

// Conditioned is a resource with conditions.
type Conditioned interface {
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

// RecalledFailure is the failure of the resource's target its Synced condition
// records, if it records one: after a restart the provider knows of its
// targets only what the API server holds.
func RecalledFailure(o Conditioned) (breaker.Failure, bool) {
	c := o.GetCondition(xpv2.TypeSynced)
	if c.Status != corev1.ConditionFalse {
		return breaker.Failure{}, false
	}
	f, ok := breaker.Recalled(c.Message)
	f.At = c.LastTransitionTime.Time
	return f, ok
}
