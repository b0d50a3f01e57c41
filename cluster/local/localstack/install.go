package localstack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CRDs the package manager installs: from the Configuration (the XRD's), from
// the provider package, and those of its managed kinds, which exist only once
// their managed resource definitions are active.
const (
	crdEventingAuth          = "eventingauths.composite.eventingauth.kyma-project.io"
	crdClusterProviderConfig = "clusterproviderconfigs.eventingauth.kyma-project.io"
)

// ManagedCRDs are the CRDs of the provider's managed kinds.
var ManagedCRDs = []string{"iasapplications.ias.eventingauth.kyma-project.io", "runtimesecrets.runtime.eventingauth.kyma-project.io"}

// install tells Crossplane to pull from the loopback registry and applies
// cluster/install.yaml, the way a user installs: the Configuration and, unless
// Options.Inactive, the ManagedResourceActivationPolicy. It waits until the
// package manager has resolved the dependencies and serves EventingAuth and
// ClusterProviderConfig (and the managed kinds, when active).
func (s *Stack) install(ctx context.Context) error {
	if err := s.mirror(ctx); err != nil {
		return err
	}
	policy, rest, err := s.installManifest()
	if err != nil {
		return err
	}
	if !s.o.Inactive {
		rest = append([]string{policy}, rest...)
	}
	if err := s.apply(ctx, strings.Join(rest, "\n---\n")); err != nil {
		return err
	}
	want := []string{crdEventingAuth, crdClusterProviderConfig}
	if !s.o.Inactive {
		want = append(want, ManagedCRDs...)
	}
	return s.waitServed(ctx, want...)
}

// Activate applies the ManagedResourceActivationPolicy of cluster/install.yaml
// (after Options.Inactive) and waits until the managed kinds are served.
func (s *Stack) Activate(ctx context.Context) error {
	policy, _, err := s.installManifest()
	if err != nil {
		return err
	}
	if err := s.apply(ctx, policy); err != nil {
		return err
	}
	return s.waitServed(ctx, ManagedCRDs...)
}

// installManifest splits cluster/install.yaml into its activation policy and
// the rest.
func (s *Stack) installManifest() (policy string, rest []string, err error) {
	b, err := os.ReadFile(filepath.Join(s.o.Root, "cluster", "install.yaml"))
	if err != nil {
		return "", nil, err
	}
	// An ImageConfig matches the package as rewritten to the mirror: a landscape
	// with a mirror adds its prefix, as this does for the loopback registry.
	upstream := "- prefix: ghcr.io/" + ProviderRepository + "\n"
	for _, doc := range strings.Split(string(b), "\n---\n") {
		if strings.Contains(doc, "kind: ManagedResourceActivationPolicy\n") {
			policy = doc
			continue
		}
		if strings.Contains(doc, "kind: ImageConfig\n") && strings.Contains(doc, upstream) {
			doc = strings.Replace(doc, upstream, upstream+"  - prefix: "+s.Registry+"/"+ProviderRepository+"\n", 1)
		}
		rest = append(rest, doc)
	}
	if policy == "" {
		return "", nil, fmt.Errorf("cluster/install.yaml has no ManagedResourceActivationPolicy")
	}
	return policy, rest, nil
}

// waitServed waits until the named CRDs are established; on a timeout it
// reports the packages' conditions, which say why.
func (s *Stack) waitServed(ctx context.Context, crds ...string) error {
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(wctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, name := range crds {
			if ok, err := s.Established(ctx, name); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(s.Work, "package-runtime.log"))
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		return fmt.Errorf("not served: %v: %w; packages: %s\npackage runtime: %s", crds, err, s.PackageConditions(ctx), b)
	}
	return nil
}

// Established tells whether a CRD exists and is established.
func (s *Stack) Established(ctx context.Context, name string) (bool, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := s.Kube.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true, nil
		}
	}
	return false, nil
}

// PackageConditions summarises the conditions of every package and revision,
// for error messages.
func (s *Stack) PackageConditions(ctx context.Context) string {
	var b strings.Builder
	for _, kind := range []string{"Configuration", "ConfigurationRevision", "Provider", "ProviderRevision", "Function", "FunctionRevision"} {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("pkg.crossplane.io/v1")
		l.SetKind(kind + "List")
		if err := s.Kube.List(ctx, l); err != nil {
			fmt.Fprintf(&b, "\n  %s: %v", kind, err)
			continue
		}
		for _, o := range l.Items {
			fmt.Fprintf(&b, "\n  %s %s:", kind, o.GetName())
			cs, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
			for _, c := range cs {
				if m, ok := c.(map[string]any); ok {
					fmt.Fprintf(&b, " %v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"])
				}
			}
		}
	}
	return b.String()
}
