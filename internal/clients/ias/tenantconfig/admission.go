package tenantconfig

import (
	"context"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	kclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
)

// DefaultKymaNamespace is where the Kyma CRs live in a Kyma control plane,
// and so the one namespace a ClusterProviderConfig admits unless it names
// others.
const DefaultKymaNamespace = "kcp-system"

// admits tells whether a ClusterProviderConfig lets the managed resources of
// namespace ns use it. The platform's credentials are for the platform's
// resources: with neither spec.namespaces nor spec.namespaceSelector set, only
// the Kyma CRs' namespace is admitted, so that whoever may create an
// IASApplication in some other namespace cannot act with them.
func (r Resolver) admits(ctx context.Context, kube kclient.Reader, name string, s v1alpha1.ClusterProviderConfigSpec, ns string) error {

	if len(s.Namespaces) == 0 && s.NamespaceSelector == nil {
		if ns == r.DefaultNamespace() {
			return nil
		}
		return errors.Errorf(ErrNotAdmitted, name, ns, "only the Kyma CRs' namespace "+r.DefaultNamespace()+" (set spec.namespaces or spec.namespaceSelector to admit others)")
	}
	if slices.Contains(s.Namespaces, ns) {
		return nil
	}
	if s.NamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(s.NamespaceSelector)
		if err != nil {
			return errors.Wrapf(err, errSelector, name)
		}
		n := &corev1.Namespace{}
		if err := kube.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
			return errors.Wrapf(err, ErrGet, "namespace "+ns)
		}
		if sel.Matches(labels.Set(n.Labels)) {
			return nil
		}
	}
	return errors.Errorf(ErrNotAdmitted, name, ns, admittedOf(s))
}

// admittedOf says which namespaces a config admits, for an error.
func admittedOf(s v1alpha1.ClusterProviderConfigSpec) string {
	var parts []string
	if len(s.Namespaces) > 0 {
		parts = append(parts, "namespaces "+strings.Join(s.Namespaces, ", "))
	}
	if s.NamespaceSelector != nil {
		parts = append(parts, "namespaces labelled "+metav1.FormatLabelSelector(s.NamespaceSelector))
	}
	return strings.Join(parts, " and ")
}

// DefaultNamespace is the namespace a ClusterProviderConfig that names none admits.
func (r Resolver) DefaultNamespace() string {
	if r.KymaNamespace == "" {
		return DefaultKymaNamespace
	}
	return r.KymaNamespace
}
