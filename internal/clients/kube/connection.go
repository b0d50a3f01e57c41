package kube

import (
	"context"
	"encoding/json"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SkipEmptyConnectionSecrets wraps a client so that a managed resource's
// connection Secret is not created, nor patched, without data. crossplane-runtime's
// managed reconciler publishes the connection details after every Observe,
// also before it creates what does not exist yet: for each new
// IASApplication that made an empty Secret, patched with the credentials
// a moment later, so one write more per runtime, and one more watch event
// for every reader of Secrets, for a Secret nobody can use. The Secret is
// made with the first details instead, by the same publisher. Its publisher
// cannot be configured (crossplane-runtime v2 has no option for it), so this
// is done in the client it is given.
func SkipEmptyConnectionSecrets(c client.Client) client.Client {
	return emptyConnectionSecretSkipping{Client: c}
}

type emptyConnectionSecretSkipping struct{ client.Client }

func (c emptyConnectionSecretSkipping) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if s, ok := obj.(*corev1.Secret); ok && emptyConnectionSecret(s) {
		return nil
	}
	return c.Client.Create(ctx, obj, opts...)
}

// Patch leaves out the merge patch that same publisher makes of an existing
// connection Secret when there is nothing to publish: it carries no data, so
// it changes nothing a reader uses (the publisher checked the Secret is the
// resource's before it patches). An IASApplication's Observe publishes nothing
// when the Secret holds its details already, sparing the publisher's slow
// comparison of them.
func (c emptyConnectionSecretSkipping) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if _, ok := obj.(*corev1.Secret); ok && patch.Type() == types.MergePatchType {
		if data, err := patch.Data(obj); err == nil {
			s := &corev1.Secret{}
			if json.Unmarshal(data, s) == nil && emptyConnectionSecret(s) {
				return nil
			}
		}
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

// emptyConnectionSecret tells whether s is a connection Secret a managed
// resource publishes, controlled by it, holding nothing.
func emptyConnectionSecret(s *corev1.Secret) bool {
	return s.Type == resource.SecretTypeConnection && metav1.GetControllerOf(s) != nil &&
		len(s.Data) == 0 && len(s.StringData) == 0
}
