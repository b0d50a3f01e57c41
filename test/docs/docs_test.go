// Package docs holds the documentation to what its readers rely on: one value
// per figure, figures a landscape can size by, and no references to the
// project's issue tracker.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
)

const root = "../.."

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// block is the text between the side-by-side markers.
func block(t *testing.T, path string) string {
	t.Helper()
	s := read(t, path)
	const begin, end = "<!-- side-by-side:begin -->", "<!-- side-by-side:end -->"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no side-by-side table between %q and %q", path, begin, end)
	}
	return strings.TrimSpace(s[i+len(begin) : j])
}

// TestReadmeFiguresArePerformanceFigures: the README's comparison table is
// docs/performance.md's, figure for figure.
func TestReadmeFiguresArePerformanceFigures(t *testing.T) {
	readme, perf := block(t, "README.md"), block(t, "docs/performance.md")
	if readme != perf {
		t.Errorf("README.md's side-by-side table differs from docs/performance.md's; change both.\nREADME.md:\n%s\ndocs/performance.md:\n%s", readme, perf)
	}
}

// TestPerformanceAnswersInTables: docs/performance.md stays short enough to
// size a landscape by, and each row of its figure tables gives a bound column,
// the machine and the make bench line that reproduces it.
func TestPerformanceAnswersInTables(t *testing.T) {
	s := read(t, "docs/performance.md")
	if n := strings.Count(s, "\n"); n > 250 {
		t.Errorf("docs/performance.md has %d lines, at most 250: today's figures only, their history is in git", n)
	}
	var header []string
	rows := 0
	for i, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "|") {
			header = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for k := range cells {
			cells[k] = strings.TrimSpace(cells[k])
		}
		switch {
		case header == nil:
			header = cells
			continue
		case strings.HasPrefix(cells[0], "---"):
			continue
		case !strings.HasPrefix(header[0], "figure"):
			continue // the side-by-side table, whose lines are named below it
		}
		if len(header) != 5 || header[2] != "bound" || header[3] != "machine" || header[4] != "`make bench` line" {
			t.Fatalf("line %d: a figure table's columns are figure, measured, bound, machine, `make bench` line; got %q", i+1, header)
		}
		if len(cells) != 5 || cells[1] == "" || cells[3] == "" || !strings.Contains(cells[4], "`") {
			t.Errorf("line %d: a row gives its figure, the machine and the make bench line: %q", i+1, line)
		}
		rows++
	}
	if rows < 30 {
		t.Errorf("docs/performance.md has %d rows of figures; a table per question was expected", rows)
	}
}

// issueRef is a reference to the issue tracker: the word, then a number.
var issueRef = regexp.MustCompile(`(?i)\bissues? #?[0-9]+`)

// TestNoIssueNumbers: docs and code say what a thing is and why; which
// ticket it came from belongs in the git history.
func TestNoIssueNumbers(t *testing.T) {
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == ".git" || name == "_output" || name == "node_modules" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(name); ext != ".go" && ext != ".md" && ext != ".sh" && ext != ".yaml" && name != "Makefile" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := issueRef.FindString(line); m != "" {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d names %q: say what and why, not which ticket", rel, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReconcilerDeparturesArePinned: every row of the architecture's table of
// changes to crossplane-runtime's managed reconciler names at least one test,
// and every test it names exists: a unit test function or an integration
// scenario.
func TestReconcilerDeparturesArePinned(t *testing.T) {
	doc := read(t, "docs/architecture.md")
	const heading = "## What the provider changes in crossplane-runtime's managed reconciler"
	i := strings.Index(doc, heading)
	if i < 0 {
		t.Fatalf("docs/architecture.md has no section %q", heading)
	}
	section := doc[i+len(heading):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var code strings.Builder
	for _, dir := range []string{"internal", "test/integration"} {
		_ = filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, "_test.go") {
				b, _ := os.ReadFile(p)
				code.Write(b)
			}
			return nil
		})
	}
	named := regexp.MustCompile("`(\\w+)`")
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || strings.HasPrefix(strings.TrimSpace(cells[1]), "change") || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		rows++
		tests := named.FindAllStringSubmatch(cells[4], -1)
		if len(tests) == 0 {
			t.Errorf("the change %q names no test", strings.TrimSpace(cells[1]))
		}
		for _, m := range tests {
			if !strings.Contains(code.String(), "func "+m[1]+"(") && !strings.Contains(code.String(), `t.Run("`+m[1]+`"`) &&
				!strings.Contains(code.String(), `"`+m[1]+`": {`) {
				t.Errorf("the change %q names %s, which is no test, scenario or case", strings.TrimSpace(cells[1]), m[1])
			}
		}
	}
	if rows < 10 {
		t.Errorf("the table has %d rows, want every change", rows)
	}
}

// TestRejectedRuleIsOneSentence: the operations guide shows the rule for
// rejected credentials in the words the conditions, events and flag use.
func TestRejectedRuleIsOneSentence(t *testing.T) {
	if doc := read(t, "docs/operations.md"); !strings.Contains(doc, breaker.RejectedRule) {
		t.Errorf("docs/operations.md does not show the rule for rejected credentials as the provider says it: %q", breaker.RejectedRule)
	}
}
