// Package archtest checks the layout rules of docs/architecture.md on the
// source tree: which module packages each package may import, which packages
// stay pure (no I/O), who may talk to the AWS SDK and initialise GDAL, and
// how long a function may grow. It reads the tree with go/parser and builds
// nothing, so it runs in a second.
package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/manejo/manejo/"

// allowed reads, for each package of the module, the module packages its
// non-test files may import: the table "Folders" of docs/architecture.md,
// whose last column is the rule ("nothing", "anything", or a list of
// backquoted packages). The document is the single statement of the layout.
func allowed(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## Folders")
	if !ok {
		t.Fatal("docs/architecture.md has no Folders section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	rules := map[string][]string{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		pkg := strings.TrimSuffix(strings.Trim(strings.TrimSpace(cells[1]), "`"), "/")
		var imps []string
		switch rule := strings.TrimSpace(cells[len(cells)-2]); rule {
		case "nothing":
		case "anything":
			imps = []string{"*"}
		default:
			for _, f := range strings.Split(rule, ",") {
				imps = append(imps, strings.Trim(strings.TrimSpace(f), "`"))
			}
		}
		rules[pkg] = imps
	}
	if len(rules) < 10 {
		t.Fatalf("docs/architecture.md: read only %d rows of the Folders table", len(rules))
	}
	return rules
}

// pure packages do no I/O (docs/architecture.md, import rule 1).
var pure = []string{"zarc", "internal/num", "spectral", "tillage", "coverage", "classify"}

// ioImports are the standard and third-party packages a pure package must
// not import.
var ioImports = []string{"os", "net", "net/http", "os/exec", "github.com/airbusgeo/godal"}

// maxFuncLines is the longest a non-test function may be, not counting the
// lines of its composite literals (tables).
const maxFuncLines = 80

type file struct {
	pkg, path string
	ast       *ast.File
}

// sources parses every non-test Go file of the module below the repository
// root, skipping testdata and hidden folders.
func sources(t *testing.T) ([]file, *token.FileSet) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []file
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (name == "testdata" || strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin" || name == "build") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		out = append(out, file{pkg: filepath.ToSlash(rel), path: p, ast: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no Go source found below the repository root")
	}
	return out, fset
}

func imports(f *ast.File) []string {
	var out []string
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		out = append(out, p)
	}
	return out
}

func TestImportRules(t *testing.T) {
	files, _ := sources(t)
	table := allowed(t)
	for _, f := range files {
		rules, ok := table[f.pkg]
		if !ok {
			t.Errorf("%s: package %s has no row in the Folders table of docs/architecture.md", f.path, f.pkg)
			continue
		}
		for _, imp := range imports(f.ast) {
			if own, ok := strings.CutPrefix(imp, module); ok && !slices.Contains(rules, "*") && !slices.Contains(rules, own) {
				t.Errorf("%s: %s imports %s, which docs/architecture.md does not allow", f.path, f.pkg, own)
			}
			if slices.Contains(pure, f.pkg) && slices.Contains(ioImports, imp) {
				t.Errorf("%s: pure package %s imports %s", f.path, f.pkg, imp)
			}
			if strings.HasPrefix(imp, "github.com/aws/") && f.pkg != "storage" && f.pkg != "storage/s3test" {
				t.Errorf("%s: only storage may import the AWS SDK (%s)", f.path, imp)
			}
		}
	}
}

// TestGDALInitialisedOnce checks that godal.RegisterAll is called only by
// storage, so GDAL is set up in one place.
func TestGDALInitialisedOnce(t *testing.T) {
	files, _ := sources(t)
	for _, f := range files {
		ast.Inspect(f.ast, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if ok && sel.Sel.Name == "RegisterAll" && f.pkg != "storage" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "godal" {
					t.Errorf("%s: godal.RegisterAll outside storage; call storage.InitGDAL", f.path)
				}
			}
			return true
		})
	}
}

// literalLines counts the lines of fn covered by composite literals (tables),
// nested literals counted once.
func literalLines(fset *token.FileSet, fn *ast.FuncDecl) int {
	covered := map[int]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if cl, ok := n.(*ast.CompositeLit); ok {
			a, b := fset.Position(cl.Lbrace).Line, fset.Position(cl.Rbrace).Line
			for l := a + 1; l < b; l++ {
				covered[l] = true
			}
		}
		return true
	})
	return len(covered)
}

func TestFunctionLength(t *testing.T) {
	files, fset := sources(t)
	for _, f := range files {
		for _, d := range f.ast.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if code := n - literalLines(fset, fn); code > maxFuncLines {
				t.Errorf("%s: %s is %d lines (%d besides table literals), over %d: split it into named steps",
					fset.Position(fn.Pos()), fn.Name.Name, n, code, maxFuncLines)
			}
		}
	}
}

func TestNoPathOutsideRepository(t *testing.T) {
	const lib = "sha" + "red" // the team library's folder, spelt so this file does not match itself
	// Tests and fixtures must not read the team library beside the clone.
	root, _ := filepath.Abs("../..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "build" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".geojson") || strings.HasSuffix(p, ".vrt")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, bad := range []string{"../" + lib + "/", `"` + lib + `", "realdata"`, `"` + lib + `", "sinm"`, `"..", "..", "` + lib + `"`} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s reaches outside the repository (%q)", p, bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
