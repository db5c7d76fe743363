package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// apiDocs are the documents whose API section points to `go doc` and the
// Examples instead of copying signatures (issue 29): the names they still
// mention are checked against the code by TestDocAPINames.
var apiDocs = []string{"tillage.md", "coverage.md", "grid.md", "outputs.md", "slope.md", "classify.md"}

// declared returns the names package dir declares: exported top-level names,
// Type.Method and Type.Field, and the Example functions of its tests.
func declared(t *testing.T, dir string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("package %s: no Go files (%v)", dir, err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			addDecl(names, d)
		}
	}
	return names
}

func addDecl(names map[string]bool, d ast.Decl) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) > 0 {
			x := d.Recv.List[0].Type
			if s, ok := x.(*ast.StarExpr); ok {
				x = s.X
			}
			if id, ok := x.(*ast.Ident); ok {
				names[id.Name+"."+d.Name.Name] = true
			}
			return
		}
		names[d.Name.Name] = true
	case *ast.GenDecl:
		for _, sp := range d.Specs {
			switch sp := sp.(type) {
			case *ast.TypeSpec:
				names[sp.Name.Name] = true
				if st, ok := sp.Type.(*ast.StructType); ok {
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							names[sp.Name.Name+"."+n.Name] = true
						}
					}
				}
			case *ast.ValueSpec:
				for _, n := range sp.Names {
					names[n.Name] = true
				}
			}
		}
	}
}

var (
	goDocRE = regexp.MustCompile("`go doc -all \\./([a-z/]+)`")
	nameRE  = regexp.MustCompile("`((?:[a-z]+\\.)?[A-Z][A-Za-z0-9_]*(?:\\.[A-Z][A-Za-z0-9_]*)?)`")
)

// TestDocAPINames checks every Go name the API sections of apiDocs mention
// (`Assess`, `Season.Assessed`, `zarc.CLevel`, `ExampleDetect`) against the
// code: a renamed or removed name fails here instead of drifting.
func TestDocAPINames(t *testing.T) {
	cache := map[string]map[string]bool{}
	names := func(pkg string) map[string]bool {
		if cache[pkg] == nil {
			cache[pkg] = declared(t, pkg)
		}
		return cache[pkg]
	}
	for _, doc := range apiDocs {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		_, sec, ok := strings.Cut(string(b), "The exported API and its doc comments are the reference")
		if !ok {
			t.Errorf("docs/%s: no API section pointing to go doc", doc)
			continue
		}
		sec, _, _ = strings.Cut(sec, "\n#")
		var pkgs []string
		for _, m := range goDocRE.FindAllStringSubmatch(sec, -1) {
			pkgs = append(pkgs, m[1])
		}
		if len(pkgs) == 0 {
			t.Errorf("docs/%s: the API section names no `go doc -all ./pkg`", doc)
			continue
		}
		n := 0
		for _, m := range nameRE.FindAllStringSubmatch(sec, -1) {
			n++
			if !docNameExists(m[1], pkgs, names) {
				t.Errorf("docs/%s mentions %s, which packages %v do not declare", doc, m[1], pkgs)
			}
		}
		if n == 0 {
			t.Errorf("docs/%s: no Go name in the API section", doc)
		}
	}
}

// docNameExists resolves name ("Name", "Type.Member" or "pkg.Name") in the
// doc's packages or in the package it names; a bare name may be a field or
// method of one of the packages' types (the prose below the pointer).
func docNameExists(name string, pkgs []string, names func(string) map[string]bool) bool {
	if first, rest, ok := strings.Cut(name, "."); ok && first == strings.ToLower(first) {
		if _, err := os.Stat(filepath.Join("..", "..", first)); err != nil {
			return true // the standard library's (io.Reader, fs.FS)
		}
		return names(first)[rest]
	}
	for _, p := range pkgs {
		if names(p)[name] {
			return true
		}
		if !strings.Contains(name, ".") { // a bare field or method name
			for k := range names(p) {
				if strings.HasSuffix(k, "."+name) {
					return true
				}
			}
		}
	}
	return false
}
