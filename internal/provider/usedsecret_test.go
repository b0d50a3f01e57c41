package provider

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestUsedSecret: the cache keeps the data of runtimes' kubeconfigs and of
// IASApplications' connection Secrets only.
func TestUsedSecret(t *testing.T) {
	controlledBy := func(apiVersion, kind string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "x", UID: "u", Controller: ptr.To(true)}}
	}
	cases := map[string]struct {
		reason string
		meta   metav1.ObjectMeta
		want   bool
	}{
		"RuntimeKubeconfig":        {reason: "a runtime's kubeconfig is read by its RuntimeSecret", meta: metav1.ObjectMeta{Name: "kubeconfig-rt-1"}, want: true},
		"ConnectionSecret":         {reason: "an IASApplication's connection Secret is copied to its runtime", meta: metav1.ObjectMeta{Name: "rt-1-ias", OwnerReferences: controlledBy("ias.eventingauth.kyma-project.io/v1alpha1", "IASApplication")}, want: true},
		"OtherProvidersConnection": {reason: "another provider's connection Secret is not cached", meta: metav1.ObjectMeta{Name: "db-conn", OwnerReferences: controlledBy("sql.example.org/v1", "Database")}},
		"SameKindOtherGroup":       {reason: "a kind of the same name in another group is not ours", meta: metav1.ObjectMeta{Name: "x", OwnerReferences: controlledBy("other.example.org/v1", "IASApplication")}},
		"OtherComponentsSecret":    {reason: "neither is any other Secret: the cache holds only what the provider reads", meta: metav1.ObjectMeta{Name: "token"}},
	}
	for name, tc := range cases {
		if got := usedSecret(&corev1.Secret{ObjectMeta: tc.meta}); got != tc.want {
			t.Errorf("%s\n%s: %v, want %v", tc.reason, name, got, tc.want)
		}
	}
}
