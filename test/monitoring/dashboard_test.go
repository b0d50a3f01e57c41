package monitoring

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

const dashboardFile = "../../cluster/dashboard.json"

// dashboard is the part of a Grafana dashboard that holds queries.
type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Type    string `json:"type"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// documentedMetrics are the metric names in the metrics table of the docs'
// Monitoring section; the integration suite checks that table against what a
// running provider exports.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(runbooks)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "\n## Monitoring\n")
	if start < 0 {
		t.Fatalf("%s has no Monitoring section", runbooks)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(doc[start:], "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(first, -1) {
			names[m[1]] = true
		}
	}
	if len(names) == 0 {
		t.Fatalf("no metrics listed in the Monitoring section of %s", runbooks)
	}
	return names
}

// metricNames are the metrics a query reads.
func metricNames(expr parser.Expr) []string {
	var out []string
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		out = append(out, name)
		return nil
	})
	return out
}

// family is the metric a series name belongs to: a histogram's buckets, sum
// and count are its own.
func family(series string) string {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if f, ok := strings.CutSuffix(series, s); ok {
			return f
		}
	}
	return series
}

func TestDashboardQueries(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	known := documentedMetrics(t)
	queries := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			queries++
			expr, err := parser.NewParser(parser.Options{}).ParseExpr(tg.Expr)
			if err != nil {
				t.Errorf("panel %q: query %q does not parse: %v", p.Title, tg.Expr, err)
				continue
			}
			names := metricNames(expr)
			if len(names) == 0 {
				t.Errorf("panel %q: query %q reads no metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				if !known[n] && !known[family(n)] {
					t.Errorf("panel %q: query %q reads %s, which the provider does not export (not in the metrics table of %s)", p.Title, tg.Expr, n, runbooks)
				}
			}
		}
	}
	if queries == 0 {
		t.Fatalf("no queries in %s", dashboardFile)
	}
}
