package integration

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
)

// newKyma is a Kyma CR as the lifecycle manager makes it: named by the runtime ID.
func newKyma(ns, runtimeID, globalAccount string) *unstructured.Unstructured {
	k := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"channel": "regular"}}}
	k.SetGroupVersionKind(eventingauth.KymaKind)
	k.SetNamespace(ns)
	k.SetName(runtimeID)
	k.SetLabels(map[string]string{eventingauth.LabelGlobalAccount: globalAccount})
	return k
}

// eventingAuthCRD is the CRD Crossplane makes of the package's XRD, reduced to
// what the bridge writes: without Crossplane core in this suite it is installed
// by hand.
func eventingAuthCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	g := NewWithT(t)
	b, err := os.ReadFile(filepath.Join("..", "..", "package", "configuration", "definition.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var xrd struct {
		Spec struct {
			Group    string                                        `json:"group"`
			Names    apiextensionsv1.CustomResourceDefinitionNames `json:"names"`
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema apiextensionsv1.JSONSchemaProps `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	g.Expect(yaml.Unmarshal(b, &xrd)).To(Succeed())
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: xrd.Spec.Names.Plural + "." + xrd.Spec.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: xrd.Spec.Group, Names: xrd.Spec.Names, Scope: apiextensionsv1.NamespaceScoped,
		},
	}
	crd.Spec.Names.ListKind = crd.Spec.Names.Kind + "List"
	for _, v := range xrd.Spec.Versions {
		s := v.Schema.OpenAPIV3Schema
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v.Name, Served: true, Storage: true,
			Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &s},
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		})
	}
	return crd
}

func testKymaBridge(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := newNamespace(t)
	kyma := newKyma(ns, "8a1d5c3e-bridge", "ga-1")
	g.Expect(k8s.Create(ctx, kyma)).To(Succeed())

	// No XRD yet: said on the Kyma CR, and retried.
	g.Eventually(func(g Gomega) {
		l := &corev1.EventList{}
		g.Expect(k8s.List(ctx, l, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range l.Items {
			if e.InvolvedObject.Kind == "Kyma" && e.InvolvedObject.Name == kyma.GetName() && e.Type == corev1.EventTypeWarning {
				reasons = append(reasons, e.Reason)
				g.Expect(e.Message).To(ContainSubstring("the kind EventingAuth.composite.eventingauth.kyma-project.io is not installed"))
			}
		}
		g.Expect(reasons).To(ContainElement("EventingAuthDefinitionMissing"))
	}, timeout, 200*time.Millisecond).Should(Succeed())

	_, err := envtest.InstallCRDs(mgmtConfig, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{eventingAuthCRD(t)}})
	g.Expect(err).NotTo(HaveOccurred())
	installed := time.Now()

	xr := &unstructured.Unstructured{}
	xr.SetGroupVersionKind(eventingauth.Kind)
	key := client.ObjectKeyFromObject(kyma)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, key, xr)).To(Succeed())
		g.Expect(xr.Object["spec"]).To(Equal(map[string]any{"runtimeId": "8a1d5c3e-bridge"}))
		g.Expect(xr.GetAnnotations()).To(HaveKeyWithValue(apis.AnnotationKymaGlobalAccount, "ga-1"))
		owner := metav1.GetControllerOf(xr)
		g.Expect(owner).NotTo(BeNil())
		g.Expect(owner.Kind).To(Equal("Kyma"))
		g.Expect(owner.UID).To(Equal(kyma.GetUID()))
	}, timeout, 200*time.Millisecond).Should(Succeed())
	// Woken by the watch on the CRD, not by the poll (3 s here).
	g.Expect(time.Since(installed)).To(BeNumerically("<", 2*time.Second), "the EventingAuth came only with a poll")

	// The global account label changes: so does the XR.
	g.Expect(k8s.Get(ctx, key, kyma)).To(Succeed())
	kyma.SetLabels(map[string]string{eventingauth.LabelGlobalAccount: "ga-2"})
	g.Expect(k8s.Update(ctx, kyma)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, key, xr)).To(Succeed())
		g.Expect(xr.GetAnnotations()).To(HaveKeyWithValue(apis.AnnotationKymaGlobalAccount, "ga-2"))
	}, timeout, 200*time.Millisecond).Should(Succeed())

	// Deleted by hand: back at the next resync.
	uid := xr.GetUID()
	g.Expect(k8s.Delete(ctx, xr)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, key, xr)).To(Succeed())
		g.Expect(xr.GetUID()).NotTo(Equal(uid))
	}, timeout, 200*time.Millisecond).Should(Succeed())
}
