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
		meta metav1.ObjectMeta
		want bool
	}{
		"a runtime's kubeconfig":                   {meta: metav1.ObjectMeta{Name: "kubeconfig-rt-1"}, want: true},
		"an IASApplication's connection Secret":    {meta: metav1.ObjectMeta{Name: "rt-1-ias", OwnerReferences: controlledBy("ias.eventingauth.kyma-project.io/v1alpha1", "IASApplication")}, want: true},
		"another provider's connection Secret":     {meta: metav1.ObjectMeta{Name: "db-conn", OwnerReferences: controlledBy("sql.example.org/v1", "Database")}},
		"a kind of the same name in another group": {meta: metav1.ObjectMeta{Name: "x", OwnerReferences: controlledBy("other.example.org/v1", "IASApplication")}},
		"another component's Secret":               {meta: metav1.ObjectMeta{Name: "token"}},
	}
	for name, tc := range cases {
		if got := usedSecret(&corev1.Secret{ObjectMeta: tc.meta}); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
