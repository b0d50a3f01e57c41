// Package monitoring tests the alert rules under cluster/ with promtool, the
// way Prometheus will evaluate them.
package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	ruleFile = "../../cluster/prometheusrule.yaml"
	ruleTest = "../../cluster/prometheusrule_test.yaml"
	runbooks = "../../docs/operations.md"
)

// prometheusRule is the part of a PrometheusRule that Prometheus loads.
type prometheusRule struct {
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// ruleTests is what the promtool test file checks, per alert.
type ruleTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

func TestAlertRules(t *testing.T) {
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		t.Fatal("PROMTOOL is not set: run `make test`, which builds promtool first (hack/promtool.sh)")
	}
	raw, err := os.ReadFile(ruleFile)
	if err != nil {
		t.Fatal(err)
	}
	var pr prometheusRule
	if err := yaml.Unmarshal(raw, &pr); err != nil {
		t.Fatalf("%s: %v", ruleFile, err)
	}
	// Prometheus loads the PrometheusRule's spec as a rule file.
	var spec map[string]any
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	rules, err := yaml.Marshal(spec["spec"])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(ruleTest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("promtool check rules", func(t *testing.T) {
		out, err := exec.Command(promtool, "check", "rules", filepath.Join(dir, "rules.yaml")).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool check rules: %v\n%s", err, out)
		}
	})
	t.Run("promtool test rules", func(t *testing.T) {
		cmd := exec.Command(promtool, "test", "rules", "tests.yaml")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool test rules %s: %v\n%s", ruleTest, err, out)
		}
	})

	t.Run("every alert has a firing and a silent case and a runbook", func(t *testing.T) {
		var rt ruleTests
		if err := yaml.Unmarshal(tests, &rt); err != nil {
			t.Fatal(err)
		}
		firing, silent := map[string]bool{}, map[string]bool{}
		for _, tc := range rt.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					firing[a.Alertname] = true
				} else {
					silent[a.Alertname] = true
				}
			}
		}
		docs, err := os.ReadFile(runbooks)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, g := range pr.Spec.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				n++
				if !firing[r.Alert] || !silent[r.Alert] {
					t.Errorf("alert %s: firing case %v, silent case %v in %s; want both", r.Alert, firing[r.Alert], silent[r.Alert], ruleTest)
				}
				anchor := "docs/operations.md#" + strings.ToLower(r.Alert)
				if r.Annotations["runbook"] != anchor {
					t.Errorf("alert %s: runbook annotation %q, want %q", r.Alert, r.Annotations["runbook"], anchor)
				}
				if !strings.Contains(string(docs), "\n### "+r.Alert+"\n") {
					t.Errorf("alert %s has no runbook section (### %s) in %s", r.Alert, r.Alert, runbooks)
				}
			}
		}
		if n == 0 {
			t.Fatalf("no alerts in %s", ruleFile)
		}
	})
}
