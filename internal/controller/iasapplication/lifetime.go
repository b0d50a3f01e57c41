package iasapplication

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	pcv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
)

// secretLifetime is how long a new client secret is valid and how long before
// its expiry it is replaced; zero: never.
type secretLifetime struct {
	validFor, rotateBefore time.Duration
}

// lifetimeOf is a ProviderConfig's secretRotation as a lifetime.
func lifetimeOf(r *pcv1alpha1.SecretRotation) secretLifetime {
	if r == nil {
		return secretLifetime{}
	}
	return secretLifetime{validFor: r.ValidFor.Duration, rotateBefore: r.RotateBefore.Duration}
}

// lifetime is the resource's own secret validity where it sets one (with or
// without rotateBefore), else its ProviderConfig's secretRotation: a platform
// sets rotation once for every runtime, and a resource that asks for its own
// keeps it whole.
func (k *secretKeeper) lifetime(cr *v1alpha1.IASApplication) secretLifetime {
	p := cr.Spec.ForProvider.Secret
	if p.ValidFor == nil || p.ValidFor.Duration <= 0 {
		return k.rotation
	}
	l := secretLifetime{validFor: p.ValidFor.Duration}
	if p.RotateBefore != nil {
		l.rotateBefore = p.RotateBefore.Duration
	}
	return l
}

// rotatesAt is when a secret valid until validTo (nil: never expires) and
// first published at publishedAt is replaced; nil: never. A secret that never
// expires is replaced as if it had been made valid for validFor when it was
// published, so that taking over a runtime changes nothing at once.
func (l secretLifetime) rotatesAt(validTo, publishedAt *time.Time) *metav1.Time {
	if l.rotateBefore <= 0 {
		return nil
	}
	switch {
	case validTo != nil:
		return &metav1.Time{Time: validTo.Add(-l.rotateBefore)}
	case publishedAt != nil:
		return &metav1.Time{Time: publishedAt.Add(l.validFor - l.rotateBefore)}
	}
	return nil
}

// due tells whether a rotation at rotatesAt is due at now.
func due(rotatesAt *metav1.Time, now time.Time) bool {
	return rotatesAt != nil && !now.Before(rotatesAt.Time)
}
