package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	coordinationv1 "k8s.io/api/coordination/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
)

// NameClaims keeps one claimant per name in the API server, as Leases in
// Namespace: creating one is atomic, so of two workers, two replicas or a
// process and its successor, one claims a name and the other sees it. Leases
// are read uncached (Reader), so the process keeps none of them in memory.
type NameClaims struct {
	Writer    client.Writer
	Reader    client.Reader
	Namespace string
}

// leaseName is the Lease of a claim on key: a digest, since key may be long
// and hold any character.
func leaseName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "name-claim-" + hex.EncodeToString(sum[:20])
}

// Claim makes holder the claimant of key, unless another claimant holds it
// still (holds tells, from the claimant's own object); it returns that other
// claimant, or "" once holder holds the claim. shown is what the claim is
// shown as to a person.
func (c NameClaims) Claim(ctx context.Context, key, shown, holder string, holds func(ctx context.Context, claimant string) (bool, error)) (string, error) {
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: leaseName(key), Namespace: c.Namespace, Annotations: map[string]string{apis.AnnotationClaimedName: shown}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)},
	}
	err := c.Writer.Create(ctx, l)
	if err == nil {
		return "", nil
	}
	if !kerrors.IsAlreadyExists(err) {
		return "", errors.Wrap(err, "cannot claim the name")
	}
	cur := &coordinationv1.Lease{}
	if err := c.Reader.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: l.Name}, cur); err != nil {
		return "", errors.Wrap(err, "cannot read the claim of the name")
	}
	claimant := ptr.Deref(cur.Spec.HolderIdentity, "")
	if claimant == holder {
		return "", nil
	}
	if claimant != "" {
		still, err := holds(ctx, claimant)
		if err != nil {
			return "", err
		}
		if still {
			return claimant, nil
		}
	}
	// The claimant is gone or names something else now: take it over, unless
	// another took it meanwhile (the update fails on the resource version).
	cur.Spec.HolderIdentity = ptr.To(holder)
	if err := c.Writer.Update(ctx, cur); err != nil {
		return "", errors.Wrap(err, "cannot take over the claim of the name")
	}
	return "", nil
}

// Release gives up holder's claim on key, if it holds it.
func (c NameClaims) Release(ctx context.Context, key, holder string) error {
	cur := &coordinationv1.Lease{}
	if err := c.Reader.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: leaseName(key)}, cur); err != nil {
		return client.IgnoreNotFound(err)
	}
	if ptr.Deref(cur.Spec.HolderIdentity, "") != holder {
		return nil
	}
	err := c.Writer.Delete(ctx, cur, client.Preconditions{ResourceVersion: ptr.To(cur.ResourceVersion)})
	return client.IgnoreNotFound(err)
}
