package monitoring

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

const (
	serviceMonitorFile = "../../cluster/servicemonitor.yaml"
	installFile        = "../../cluster/install.yaml"
)

// documents splits a YAML stream.
func documents(t *testing.T, file string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, d := range bytes.Split(b, []byte("\n---\n")) {
		if len(bytes.TrimSpace(d)) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// TestServiceMonitorScrapesTheProvider: the ServiceMonitor is one the
// Prometheus Operator takes (every field known to its v1 API), selects the
// metrics Service cluster/install.yaml ships, whose port reaches the provider's
// pods, scrapes it over HTTPS with Prometheus' token, and the binding lets that
// token read /metrics.
func TestServiceMonitorScrapesTheProvider(t *testing.T) {
	var sm *monitoringv1.ServiceMonitor
	var binding *rbacv1.ClusterRoleBinding
	for _, d := range documents(t, serviceMonitorFile) {
		switch {
		case bytes.Contains(d, []byte("kind: ServiceMonitor")):
			sm = &monitoringv1.ServiceMonitor{}
			if err := yaml.UnmarshalStrict(d, sm); err != nil {
				t.Fatalf("the ServiceMonitor is not one the Prometheus Operator's v1 API takes: %v", err)
			}
		case bytes.Contains(d, []byte("kind: ClusterRoleBinding")):
			binding = &rbacv1.ClusterRoleBinding{}
			if err := yaml.UnmarshalStrict(d, binding); err != nil {
				t.Fatal(err)
			}
		}
	}
	if sm == nil || binding == nil {
		t.Fatalf("%s holds no ServiceMonitor or no ClusterRoleBinding", serviceMonitorFile)
	}
	var svc *corev1.Service
	podLabels := map[string]string{}
	metricsReader := false
	for _, d := range documents(t, installFile) {
		switch {
		case bytes.Contains(d, []byte("kind: Service\n")) && bytes.Contains(d, []byte("name: provider-eventing-auth-metrics")):
			svc = &corev1.Service{}
			if err := yaml.UnmarshalStrict(d, svc); err != nil {
				t.Fatal(err)
			}
		case bytes.Contains(d, []byte("kind: DeploymentRuntimeConfig")):
			var drc struct {
				Spec struct {
					DeploymentTemplate struct {
						Spec struct {
							Template struct {
								Metadata struct {
									Labels map[string]string `json:"labels"`
								} `json:"metadata"`
							} `json:"template"`
						} `json:"spec"`
					} `json:"deploymentTemplate"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(d, &drc); err != nil {
				t.Fatal(err)
			}
			podLabels = drc.Spec.DeploymentTemplate.Spec.Template.Metadata.Labels
		case bytes.Contains(d, []byte("name: provider-eventing-auth:metrics-reader")) && bytes.Contains(d, []byte("kind: ClusterRole\n")):
			metricsReader = bytes.Contains(d, []byte("nonResourceURLs: [/metrics]"))
		}
	}
	if svc == nil {
		t.Fatalf("%s ships no Service provider-eventing-auth-metrics", installFile)
	}
	sel, err := labels.ValidatedSelectorFromSet(sm.Spec.Selector.MatchLabels)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(svc.Labels)) || !slices.Contains(sm.Spec.NamespaceSelector.MatchNames, svc.Namespace) {
		t.Errorf("the ServiceMonitor selects %v in %v, not the Service %s/%s labelled %v", sm.Spec.Selector.MatchLabels, sm.Spec.NamespaceSelector.MatchNames, svc.Namespace, svc.Name, svc.Labels)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(podLabels)) {
		t.Errorf("the Service selects %v, not the provider's pods %v", svc.Spec.Selector, podLabels)
	}
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("endpoints: %d, want 1", len(sm.Spec.Endpoints))
	}
	ep := sm.Spec.Endpoints[0]
	port := false
	for _, p := range svc.Spec.Ports {
		port = port || p.Name == ep.Port && p.TargetPort.IntValue() == 8080
	}
	if !port {
		t.Errorf("the endpoint's port %q is no port of the Service reaching the metrics port 8080: %v", ep.Port, svc.Spec.Ports)
	}
	//nolint:staticcheck // BearerTokenFile is what sends Prometheus' own token.
	if ep.Scheme == nil || strings.ToLower(string(*ep.Scheme)) != "https" || ep.Path != "/metrics" || ep.BearerTokenFile == "" {
		t.Errorf("the endpoint scrapes %v %q with token file %q; the port serves HTTPS and answers only a bearer token", ep.Scheme, ep.Path, ep.BearerTokenFile) //nolint:staticcheck // as above
	}
	if binding.RoleRef.Name != "provider-eventing-auth:metrics-reader" || !metricsReader {
		t.Errorf("the binding grants %q; want the ClusterRole provider-eventing-auth:metrics-reader of %s, which may GET /metrics", binding.RoleRef.Name, installFile)
	}
}
