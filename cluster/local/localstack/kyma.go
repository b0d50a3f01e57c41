package localstack

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
)

// AddRuntime makes the stack's runtime the Kyma runtime runtimeID: the
// kyma-system namespace there, Secret kubeconfig-<runtimeID> in kcp-system here.
func (s *Stack) AddRuntime(ctx context.Context, runtimeID string) error {
	// The runtime's client certificate names it to the provider's listener.
	s.runtimeID.Store(runtimeID)
	if err := s.RuntimeKube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kyma-system"}}); err != nil {
		return err
	}
	return s.Kube.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + runtimeID, Namespace: KCPNamespace},
		Data:       map[string][]byte{"config": s.RuntimeKubeconfigData},
	})
}

// CreateKyma creates the Kyma CR of a runtime, as the lifecycle manager would.
func (s *Stack) CreateKyma(ctx context.Context, runtimeID, globalAccount string) (*unstructured.Unstructured, error) {
	kyma := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"channel": "regular"}}}
	kyma.SetGroupVersionKind(eventingauth.KymaKind)
	kyma.SetNamespace(KCPNamespace)
	kyma.SetName(runtimeID)
	kyma.SetLabels(map[string]string{eventingauth.LabelGlobalAccount: globalAccount})
	return kyma, s.Kube.Create(ctx, kyma)
}

// Condition returns the status of a condition of an object, "" if it has none.
func Condition(u *unstructured.Unstructured, conditionType string) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}
