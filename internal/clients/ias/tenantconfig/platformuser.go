package tenantconfig

import (
	"context"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	kclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// notPlatformUser refuses a namespace's ProviderConfig that logs on as a
// technical user some ClusterProviderConfig logs on as at the same IAS tenant
// (however either URL is written, ias.TenantID). IAS counts failed logons per
// user: a namespace's wrong password for the platform's user would count
// toward locking it, and a right one would let the namespace act as the
// platform. Decided from the configs themselves, not from what this process
// has seen, so that it holds from the first reconcile after a restart.
func (r Resolver) notPlatformUser(ctx context.Context, kube kclient.Reader, t ias.Tenant, secret string) error {
	l := &v1alpha1.ClusterProviderConfigList{}
	if err := kube.List(ctx, l); err != nil {
		return errors.Wrap(err, errListPlatform)
	}
	tenant := ias.TenantID(t.URL)
	for _, pc := range l.Items {
		ref := pc.Spec.Credentials.SecretRef
		s := &corev1.Secret{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
			if kerrors.IsNotFound(err) {
				continue // that config logs on as nobody
			}
			return errors.Wrap(err, errListPlatform)
		}
		url, err := ias.ValidateURL(strings.TrimSpace(string(s.Data[KeyURL])), r.PlainHTTPLoopback)
		if err != nil || ias.TenantID(url) != tenant {
			continue
		}
		if strings.EqualFold(strings.TrimSpace(string(s.Data[KeyUsername])), t.Username) {
			return errors.Errorf(ErrPlatformUser, secret)
		}
	}
	return nil
}
