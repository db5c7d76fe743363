// Command codestats measures how readable the module's Go code is, with
// go/ast and nothing built: per package, the non-test file sizes in lines
// (largest, how many over 800), the function lengths (90th percentile and
// largest, non-test and test apart), the custom test flags, the tests that
// always skip under `make test` (no -short, no flag, no environment variable
// set), and how many exported names carry a doc comment. Issue 29's
// before/after table is its output:
//
//	go run ./internal/tools/codestats            # the table, in Markdown
//	go run ./internal/tools/codestats -detail    # and the lists behind it
//
// With -testjson FILE (the output of `go test -json`), it also counts the
// top-level tests that reported skip at run time, per package.
package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// bigFile is the line count above which a non-test file is too long to read
// whole (the founders' standard, issue 29).
const bigFile = 800

// pkgStats is what codestats reports for one package (folder).
type pkgStats struct {
	Dir        string
	Files      int      // non-test Go files
	Lines      int      // their lines
	MaxFile    int      // lines of the largest non-test file
	MaxFileAt  string   // its path
	Big        []string // non-test files over bigFile lines, "path (n)"
	Funcs      []int    // non-test function lengths in lines
	TestFuncs  []int    // test-file function lengths in lines
	Flags      []string // custom flags the test files declare
	Skips      []string // tests that always skip under make test, "file:Test (why)"
	Exported   int      // exported top-level names (and methods of exported types)
	Documented int      // of which with a doc comment

	testLines map[string]int // lines of each test file, by path
}

// walk parses every Go file below root, skipping testdata, hidden, bin and
// build folders, and returns the stats of each folder holding Go files,
// sorted by folder.
func walk(root string) ([]*pkgStats, error) {
	byDir := map[string]*pkgStats{}
	var tests = map[string][]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "bin" || name == "build" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		dir := filepath.ToSlash(filepath.Dir(rel))
		s := byDir[dir]
		if s == nil {
			s = &pkgStats{Dir: dir}
			byDir[dir] = s
		}
		if strings.HasSuffix(name, "_test.go") {
			s.TestFuncs = append(s.TestFuncs, funcLengths(fset, f)...)
			if s.testLines == nil {
				s.testLines = map[string]int{}
			}
			s.testLines[rel] = fset.File(f.Pos()).LineCount()
			tests[dir] = append(tests[dir], f)
			return nil
		}
		addSource(s, fset, f, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []*pkgStats
	for dir, s := range byDir {
		s.Flags, s.Skips = testFlags(fset, tests[dir])
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// addSource adds one non-test file to its package's stats.
func addSource(s *pkgStats, fset *token.FileSet, f *ast.File, rel string) {
	n := fset.File(f.Pos()).LineCount()
	s.Files++
	s.Lines += n
	if n > s.MaxFile {
		s.MaxFile, s.MaxFileAt = n, rel
	}
	if n > bigFile && !ast.IsGenerated(f) {
		s.Big = append(s.Big, rel)
	}
	s.Funcs = append(s.Funcs, funcLengths(fset, f)...)
	exp, doc := documented(f)
	s.Exported += exp
	s.Documented += doc
}

// funcLengths is the length in lines of every function declaration of f,
// from the func keyword to the closing brace (doc comment not counted).
func funcLengths(fset *token.FileSet, f *ast.File) []int {
	var out []int
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
			out = append(out, fset.Position(fn.End()).Line-fset.Position(fn.Pos()).Line+1)
		}
	}
	return out
}

// documented counts the exported names of f (functions, methods of exported
// receivers, types, constants, variables) and how many have a doc comment;
// a name in a grouped declaration is documented by its own comment or the
// group's.
func documented(f *ast.File) (exported, withDoc int) {
	count := func(name string, doc ...*ast.CommentGroup) {
		if !ast.IsExported(name) {
			return
		}
		exported++
		if slices.ContainsFunc(doc, func(c *ast.CommentGroup) bool { return c != nil && strings.TrimSpace(c.Text()) != "" }) {
			withDoc++
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && !ast.IsExported(receiverName(d.Recv)) {
				continue
			}
			count(d.Name.Name, d.Doc)
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					count(sp.Name.Name, sp.Doc, d.Doc)
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						count(n.Name, sp.Doc, d.Doc)
					}
				}
			}
		}
	}
	return exported, withDoc
}

// receiverName is the type name of a method's receiver (T, *T, T[P]).
func receiverName(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) == 0 {
		return ""
	}
	x := recv.List[0].Type
	for {
		switch t := x.(type) {
		case *ast.StarExpr:
			x = t.X
		case *ast.IndexExpr:
			x = t.X
		case *ast.IndexListExpr:
			x = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// percentile is the nearest-rank p-th percentile of xs (0 when empty).
func percentile(xs []int, p float64) int {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(math.Ceil(float64(len(s))*p/100)) - 1
	return s[max(0, min(k, len(s)-1))]
}
