package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// idiomatic are the directories whose table tests follow crossplane-runtime's
// idiom: each case carries a reason, printed with every failure. They hold the
// unit tests, which a newcomer copies first; the integration, end-to-end and
// bench tables under test/ and cluster/ name scenarios and are left out.
var idiomatic = []string{"../../internal", "../../function", "../../cmd"}

// TestTableTestsCarryAReason: every table of cases (a map or slice of structs
// named cases) in the idiomatic directories has a reason field.
func TestTableTestsCarryAReason(t *testing.T) {
	for _, dir := range idiomatic {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
				return err
			}
			for _, at := range tablesWithoutReason(t, path) {
				t.Errorf("%s: table of cases without a reason field; add one and print it with each failure", at)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// tablesWithoutReason returns the positions of the tables in a file whose case
// struct has no field named reason.
func tablesWithoutReason(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	ast.Inspect(f, func(n ast.Node) bool {
		assign, ok := n.(*ast.AssignStmt)
		if !ok || len(assign.Lhs) != 1 || len(assign.Rhs) != 1 {
			return true
		}
		if id, ok := assign.Lhs[0].(*ast.Ident); !ok || id.Name != "cases" {
			return true
		}
		lit, ok := assign.Rhs[0].(*ast.CompositeLit)
		if !ok {
			return true
		}
		var elem ast.Expr
		switch typ := lit.Type.(type) {
		case *ast.MapType:
			elem = typ.Value
		case *ast.ArrayType:
			elem = typ.Elt
		}
		st, ok := elem.(*ast.StructType)
		if !ok {
			return true
		}
		for _, field := range st.Fields.List {
			for _, name := range field.Names {
				if name.Name == "reason" {
					return true
				}
			}
		}
		missing = append(missing, fset.Position(assign.Pos()).String())
		return true
	})
	return missing
}
