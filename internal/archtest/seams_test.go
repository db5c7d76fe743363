package archtest

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoTestSetsPackageVar checks that no test changes a package-level
// variable of the product (issue 29: no test toggle in production code):
// no _test.go file of the default build assigns, increments or takes the
// address of a variable that a non-test file declares at package level,
// neither its own package's (name) nor another module package's
// (pkg.Name). A test that needs another value passes it as a parameter or
// provokes the condition for real. The research build (-tags research,
// docs/architecture.md "Research knobs") is not the product and is not read.
//
// known lists the ones left, each with its reason; it may only shrink.
func TestNoTestSetsPackageVar(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]map[string]bool{} // module package path → its package-level vars
	var tests []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin" || name == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		if ok, err := build.Default.MatchFile(filepath.Dir(p), name); err != nil || !ok {
			return err
		}
		if strings.HasSuffix(name, "_test.go") {
			tests = append(tests, p)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := module + filepath.ToSlash(rel)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if vars[pkg] == nil {
							vars[pkg] = map[string]bool{}
						}
						vars[pkg][n.Name] = true
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tests {
		checkTestFile(t, root, p, vars)
	}
}

// known are the package-level variables tests may still set: none.
var known = map[string]bool{}

// checkTestFile reports the package-level variables of vars that the test
// file p sets.
func checkTestFile(t *testing.T, root, p string, vars map[string]map[string]bool) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, 0) // resolved: locals have an Obj
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, filepath.Dir(p))
	own := module + filepath.ToSlash(rel)
	if strings.HasSuffix(f.Name.Name, "_test") {
		own = "" // an external test package sees only exported names
	}
	imported := map[string]string{} // local name → module package
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		if !strings.HasPrefix(path, module) {
			continue
		}
		name := filepath.Base(path)
		if im.Name != nil {
			name = im.Name.Name
		}
		imported[name] = path
	}
	check := func(e ast.Expr) {
		for {
			switch x := e.(type) {
			case *ast.ParenExpr:
				e = x.X
				continue
			case *ast.StarExpr:
				e = x.X
				continue
			case *ast.IndexExpr:
				e = x.X
				continue
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Obj == nil && imported[id.Name] != "" {
					if vars[imported[id.Name]][x.Sel.Name] && !known[imported[id.Name]+"."+x.Sel.Name] {
						t.Errorf("%s: a test sets %s.%s, a package-level variable of the product", fset.Position(x.Pos()), id.Name, x.Sel.Name)
					}
					return
				}
				e = x.X
				continue
			}
			break
		}
		if id, ok := e.(*ast.Ident); ok && id.Obj == nil && own != "" && vars[own][id.Name] && !known[own+"."+id.Name] {
			t.Errorf("%s: a test sets %s, a package-level variable of the product", fset.Position(id.Pos()), id.Name)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if x.Tok != token.DEFINE {
				for _, l := range x.Lhs {
					check(l)
				}
			}
		case *ast.IncDecStmt:
			check(x.X)
		case *ast.UnaryExpr:
			if x.Op == token.AND {
				check(x.X)
			}
		}
		return true
	})
}
