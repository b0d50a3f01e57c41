//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
)

// Names the package manager gives what cluster/install.yaml pulls in.
const (
	configurationName = "configuration-eventing-auth"
	providerName      = "kyma-project-provider-eventing-auth"
)

var functionNames = []string{"kyma-project-function-eventing-auth"}

// pkgObject reads a cluster-scoped object of Crossplane's package or
// extension APIs.
func pkgObject(ctx context.Context, s *localstack.Stack, apiVersion, kind, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u, s.Kube.Get(ctx, client.ObjectKey{Name: name}, u)
}

// expectInstalled checks what a user checks after applying cluster/install.yaml:
// every package Installed and Healthy, the managed resource definitions
// active, the provider's CRDs controlled by its active revision, and the
// watcher port's Service and NetworkPolicy, which admits the gateway's pods
// and the provider's own pods to it alone.
func expectInstalled(g Gomega, ctx context.Context, s *localstack.Stack, version string) {
	svc := &corev1.Service{}
	g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.CrossplaneNamespace, Name: "provider-eventing-auth-watcher"}, svc)).To(Succeed())
	np := &networkingv1.NetworkPolicy{}
	g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.CrossplaneNamespace, Name: "provider-eventing-auth-watcher"}, np)).To(Succeed())
	g.Expect(np.Spec.PodSelector.MatchLabels).To(Equal(svc.Spec.Selector), "the NetworkPolicy guards the pods the Service sends to")
	var watcherFrom []string
	for _, rule := range np.Spec.Ingress {
		for _, port := range rule.Ports {
			if port.Port != nil && port.Port.IntValue() == 8082 {
				for _, peer := range rule.From {
					// A namespace and pod selector in one peer: those pods
					// of that namespace only.
					var who []string
					if peer.NamespaceSelector != nil {
						who = append(who, "namespace "+peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"])
					}
					if peer.PodSelector != nil {
						who = append(who, "pods "+labels.Set(peer.PodSelector.MatchLabels).String())
					}
					watcherFrom = append(watcherFrom, strings.Join(who, ", "))
				}
			}
		}
	}
	g.Expect(watcherFrom).To(ConsistOf("namespace istio-system, pods istio=ingressgateway", "pods app.kubernetes.io/name=provider-eventing-auth"),
		"who may reach the watcher port: the gateway's pods and the provider's replicas")

	pkgs := map[string]string{"Configuration": configurationName, "Provider": providerName}
	for _, fn := range functionNames {
		pkgs["Function/"+fn] = fn
	}
	for kind, name := range pkgs {
		kind, _, _ = strings.Cut(kind, "/")
		p, err := pkgObject(ctx, s, "pkg.crossplane.io/v1", kind, name)
		g.Expect(err).NotTo(HaveOccurred(), "%s %s", kind, name)
		g.Expect(localstack.Condition(p, "Installed")).To(Equal("True"), "%s %s: %v", kind, name, p.Object["status"])
		g.Expect(localstack.Condition(p, "Healthy")).To(Equal("True"), "%s %s: %v", kind, name, p.Object["status"])
	}
	for _, name := range []string{configurationName, providerName} {
		kind := map[string]string{configurationName: "Configuration", providerName: "Provider"}[name]
		p, err := pkgObject(ctx, s, "pkg.crossplane.io/v1", kind, name)
		g.Expect(err).NotTo(HaveOccurred())
		id, _, _ := unstructured.NestedString(p.Object, "status", "currentIdentifier")
		g.Expect(id).To(HaveSuffix(":"+version), "%s %s", kind, name)
	}
	prov, err := pkgObject(ctx, s, "pkg.crossplane.io/v1", "Provider", providerName)
	g.Expect(err).NotTo(HaveOccurred())
	rev, _, _ := unstructured.NestedString(prov.Object, "status", "currentRevision")
	for _, name := range localstack.ManagedCRDs {
		mrd, err := pkgObject(ctx, s, "apiextensions.crossplane.io/v1alpha1", "ManagedResourceDefinition", name)
		g.Expect(err).NotTo(HaveOccurred(), name)
		state, _, _ := unstructured.NestedString(mrd.Object, "spec", "state")
		g.Expect(state).To(Equal("Active"), name)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(s.Kube.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
		owner := metav1.GetControllerOf(crd)
		g.Expect(owner).NotTo(BeNil(), "CRD %s has no controller", name)
		g.Expect(owner.Kind+"/"+owner.Name).To(Equal("ProviderRevision/"+rev), "CRD %s", name)
		owner = metav1.GetControllerOf(mrd)
		g.Expect(owner).NotTo(BeNil(), "MRD %s has no controller", name)
		g.Expect(owner.Kind+"/"+owner.Name).To(Equal("ProviderRevision/"+rev), "MRD %s", name)
	}
}

// startStack starts the local stack for a test with o's options, in a work
// directory kept when the test fails, and stops it when the test ends; a
// failed test logs where the logs are, the provider's last lines and the
// packages' conditions.
func startStack(t testing.TB, ctx context.Context, o localstack.Options) *localstack.Stack {
	t.Helper()
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	o.Root = root
	o.Assets, o.Tools, o.Work = os.Getenv("KUBEBUILDER_ASSETS"), os.Getenv("CROSSPLANE_TOOLS"), workDir(t)
	s, err := localstack.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			t.Logf("logs are in %s; provider log tail:\n%s\npackages: %s", s.Work, s.Provider().Tail(), s.PackageConditions(ctx))
		}
	})
	return s
}

// workDir is the stack's work directory, kept when the test fails so the
// processes' logs can be read.
func workDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(dir)
		}
	})
	return dir
}

// expectPlatforms checks that a package as published is an index of one
// image per platform, as `crossplane xpkg push -f` makes it and the package
// manager picks from.
func expectPlatforms(g Gomega, ctx context.Context, s *localstack.Stack, ref string, want ...string) {
	out, err := exec.CommandContext(ctx, filepath.Join(os.Getenv("CROSSPLANE_TOOLS"), "crane"), "manifest", s.Mirrored(ref)).Output()
	g.Expect(err).NotTo(HaveOccurred(), "crane manifest %s", ref)
	var index struct {
		MediaType string `json:"mediaType"`
		Manifests []struct {
			Platform struct{ OS, Architecture string } `json:"platform"`
		} `json:"manifests"`
	}
	g.Expect(json.Unmarshal(out, &index)).To(Succeed())
	var got []string
	for _, m := range index.Manifests {
		got = append(got, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	g.Expect(got).To(ConsistOf(want), "%s is published for %v (%s)", ref, got, index.MediaType)
}
