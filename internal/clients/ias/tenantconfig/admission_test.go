package tenantconfig

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

func TestAdmits(t *testing.T) {
	scheme := fakes.Scheme()
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"eventing-auth": "allowed"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-b"}},
	).Build()
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"eventing-auth": "allowed"}}
	cases := map[string]struct {
		reason string
		kyma   string
		spec   v1alpha1.ClusterProviderConfigSpec
		ns     string
		want   error
	}{
		"DefaultKymaNamespace": {
			reason: "Unset, the config admits the Kyma CRs' namespace.",
			ns:     DefaultKymaNamespace,
		},
		"DefaultRefusesOthers": {
			reason: "Unset, the config admits no other namespace.",
			ns:     "tenant-b",
			want:   errors.Errorf(ErrNotAdmitted, "default", "tenant-b", "only the Kyma CRs' namespace kcp-system (set spec.namespaces or spec.namespaceSelector to admit others)"),
		},
		"KymaNamespaceSetting": {
			reason: "The provider's Kyma namespace is the one admitted by default.",
			kyma:   "kyma-cp",
			ns:     DefaultKymaNamespace,
			want:   errors.Errorf(ErrNotAdmitted, "default", DefaultKymaNamespace, "only the Kyma CRs' namespace kyma-cp (set spec.namespaces or spec.namespaceSelector to admit others)"),
		},
		"Listed": {
			reason: "A listed namespace is admitted.",
			spec:   v1alpha1.ClusterProviderConfigSpec{Namespaces: []string{"tenant-b"}},
			ns:     "tenant-b",
		},
		"ListReplacesDefault": {
			reason: "A list admits what it names, not the Kyma namespace as well.",
			spec:   v1alpha1.ClusterProviderConfigSpec{Namespaces: []string{"team-a"}},
			ns:     DefaultKymaNamespace,
			want:   errors.Errorf(ErrNotAdmitted, "default", DefaultKymaNamespace, "namespaces team-a"),
		},
		"Selected": {
			reason: "A namespace whose labels the selector matches is admitted.",
			spec:   v1alpha1.ClusterProviderConfigSpec{NamespaceSelector: selector},
			ns:     "team-a",
		},
		"NotSelected": {
			reason: "A namespace whose labels the selector does not match is refused.",
			spec:   v1alpha1.ClusterProviderConfigSpec{NamespaceSelector: selector},
			ns:     "tenant-b",
			want:   errors.Errorf(ErrNotAdmitted, "default", "tenant-b", "namespaces labelled eventing-auth=allowed"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := Resolver{KymaNamespace: tc.kyma}.admits(context.Background(), kube, "default", tc.spec, tc.ns)
			if diff := cmp.Diff(tc.want, err, test.EquateErrors()); diff != "" {
				t.Errorf("%s\nadmits(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
