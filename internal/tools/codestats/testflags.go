package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/printer"
	"go/token"
	"maps"
	"strings"
)

// flagDecls are the functions of package flag that declare a flag, with the
// position of the flag's name among their arguments.
var flagDecls = map[string]int{
	"Bool": 0, "Duration": 0, "Float64": 0, "Int": 0, "Int64": 0, "String": 0, "Uint": 0, "Uint64": 0,
	"Func": 0, "BoolFunc": 0,
	"BoolVar": 1, "DurationVar": 1, "Float64Var": 1, "IntVar": 1, "Int64Var": 1, "StringVar": 1,
	"UintVar": 1, "Uint64Var": 1, "Var": 1, "TextVar": 1,
}

// flagCall reports whether call declares a flag, and the flag's name.
func flagCall(call *ast.CallExpr) (string, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "flag" {
		return "", false
	}
	i, ok := flagDecls[sel.Sel.Name]
	if !ok || len(call.Args) <= i {
		return "", false
	}
	lit, ok := call.Args[i].(*ast.BasicLit)
	if !ok {
		return "?", true
	}
	return strings.Trim(lit.Value, "`\""), true
}

// defaults holds what a test's guard reads when no flag and no environment
// variable is given: the default of each flag variable (by identifier; a
// pointer from flag.Bool and the like reads the same through *).
type defaults map[string]constant.Value

// testFlags lists the custom flags the test files of one package declare and
// the tests that always skip under `make test`: those whose body (or a helper
// of the package it calls at top level) runs t.Skip under a condition that
// holds with every flag at its default, no environment variable set and no
// -short.
func testFlags(fset *token.FileSet, files []*ast.File) (flags, skips []string) {
	defs := defaults{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name, ok := flagCall(call)
			if !ok {
				return true
			}
			flags = append(flags, name)
			defs.record(call)
			return true
		})
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				defs.recordVars(gd)
			}
		}
	}
	helpers := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil && fn.Recv == nil {
				if why := defs.skipsAlways(fset, fn.Body, nil); why != "" {
					helpers[fn.Name.Name] = why
				}
			}
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !isTest(fn) {
				continue
			}
			if why := defs.skipsAlways(fset, fn.Body, helpers); why != "" {
				skips = append(skips, fmt.Sprintf("%s:%s (%s)", fset.Position(fn.Pos()).Filename, fn.Name.Name, why))
			}
		}
	}
	return flags, skips
}

// isTest reports whether fn is a top-level test (TestXxx(t *testing.T)).
func isTest(fn *ast.FuncDecl) bool {
	return fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" &&
		fn.Type.Params != nil && len(fn.Type.Params.List) == 1
}

// record notes the default of a flag.XxxVar(&v, name, default, …) call under
// v's name.
func (d defaults) record(call *ast.CallExpr) {
	sel := call.Fun.(*ast.SelectorExpr)
	if !strings.HasSuffix(sel.Sel.Name, "Var") || sel.Sel.Name == "Var" || sel.Sel.Name == "TextVar" || len(call.Args) < 3 {
		return
	}
	if u, ok := call.Args[0].(*ast.UnaryExpr); ok && u.Op == token.AND {
		if id, ok := u.X.(*ast.Ident); ok {
			if v := d.eval(call.Args[2]); v != nil {
				d[id.Name] = v
			}
		}
	}
}

// recordVars notes the default of every var x = flag.Xxx(name, default, …).
func (d defaults) recordVars(gd *ast.GenDecl) {
	for _, sp := range gd.Specs {
		vs := sp.(*ast.ValueSpec)
		for i, name := range vs.Names {
			if i >= len(vs.Values) {
				break
			}
			call, ok := vs.Values[i].(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				continue
			}
			if _, ok := flagCall(call); ok && !strings.HasSuffix(call.Fun.(*ast.SelectorExpr).Sel.Name, "Func") {
				if v := d.eval(call.Args[1]); v != nil {
					d[name.Name] = v
				}
			}
		}
	}
}

// skipsAlways returns, when body's top-level statements skip whatever
// happens (an unconditional t.Skip, an if that skips under a condition true
// at the defaults, a call of a helper that does), the reason; else "".
//
// The reason starts with "flag: " when the condition reads a custom flag,
// with "env: " otherwise (an environment variable, a constant).
func (d defaults) skipsAlways(fset *token.FileSet, body *ast.BlockStmt, helpers map[string]string) string {
	flags := d
	d = maps.Clone(d) // locals such as path := os.Getenv("X") join the defaults
	for _, st := range body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if id, ok := st.Lhs[0].(*ast.Ident); ok && st.Tok == token.DEFINE && len(st.Lhs) == 1 && len(st.Rhs) == 1 {
				if v := d.eval(st.Rhs[0]); v != nil {
					d[id.Name] = v
				}
			}
		case *ast.ExprStmt:
			call, ok := st.X.(*ast.CallExpr)
			if !ok {
				continue
			}
			if isSkip(call) {
				return "env: unconditional"
			}
			if id, ok := call.Fun.(*ast.Ident); ok && helpers[id.Name] != "" {
				kind, cond, _ := strings.Cut(helpers[id.Name], ": ")
				return kind + ": " + id.Name + ": " + cond
			}
		case *ast.IfStmt:
			if st.Init != nil || !skipsIn(st.Body) {
				continue
			}
			if v := d.eval(st.Cond); v != nil && v.Kind() == constant.Bool && constant.BoolVal(v) {
				var b strings.Builder
				_ = printer.Fprint(&b, fset, st.Cond)
				return readsFlag(st.Cond, flags) + b.String()
			}
		}
	}
	return ""
}

// readsFlag is "flag: " when cond reads one of the flag variables, else
// "env: ".
func readsFlag(cond ast.Expr, flags defaults) string {
	kind := "env: "
	ast.Inspect(cond, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && flags[id.Name] != nil {
			kind = "flag: "
		}
		return true
	})
	return kind
}

// skipsIn reports whether a block's own statements call X.Skip, X.Skipf or
// X.SkipNow.
func skipsIn(b *ast.BlockStmt) bool {
	for _, st := range b.List {
		if es, ok := st.(*ast.ExprStmt); ok {
			if call, ok := es.X.(*ast.CallExpr); ok && isSkip(call) {
				return true
			}
		}
	}
	return false
}

func isSkip(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && (sel.Sel.Name == "Skip" || sel.Sel.Name == "Skipf" || sel.Sel.Name == "SkipNow")
}

// eval evaluates a guard at the defaults: flag variables at their default,
// testing.Short() false, os.Getenv "" (make test sets neither); nil when it
// cannot tell.
func (d defaults) eval(e ast.Expr) constant.Value {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return d.eval(e.X)
	case *ast.BasicLit:
		return constant.MakeFromLiteral(e.Value, e.Kind, 0)
	case *ast.Ident:
		switch e.Name {
		case "true", "false":
			return constant.MakeBool(e.Name == "true")
		}
		return d[e.Name]
	case *ast.StarExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			return d[id.Name]
		}
	case *ast.UnaryExpr:
		if x := d.eval(e.X); x != nil && e.Op == token.NOT && x.Kind() == constant.Bool {
			return constant.MakeBool(!constant.BoolVal(x))
		}
	case *ast.CallExpr:
		return evalCall(e)
	case *ast.BinaryExpr:
		return d.evalBinary(e)
	}
	return nil
}

// evalCall knows testing.Short() and os.Getenv(…) under make test.
func evalCall(e *ast.CallExpr) constant.Value {
	sel, ok := e.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	pkg, _ := sel.X.(*ast.Ident)
	switch {
	case pkg == nil:
		return nil
	case pkg.Name == "testing" && sel.Sel.Name == "Short":
		return constant.MakeBool(false)
	case pkg.Name == "os" && sel.Sel.Name == "Getenv":
		return constant.MakeString("")
	}
	return nil
}

func (d defaults) evalBinary(e *ast.BinaryExpr) constant.Value {
	x, y := d.eval(e.X), d.eval(e.Y)
	isBool := func(v constant.Value, want bool) bool {
		return v != nil && v.Kind() == constant.Bool && constant.BoolVal(v) == want
	}
	switch e.Op {
	case token.LAND:
		if isBool(x, false) || isBool(y, false) {
			return constant.MakeBool(false)
		}
	case token.LOR:
		if isBool(x, true) || isBool(y, true) {
			return constant.MakeBool(true)
		}
	}
	if x == nil || y == nil {
		return nil
	}
	switch e.Op {
	case token.LAND, token.LOR:
		return constant.BinaryOp(x, e.Op, y)
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
		if x.Kind() == y.Kind() || (x.Kind() != constant.String && y.Kind() != constant.String && x.Kind() != constant.Bool) {
			return constant.MakeBool(constant.Compare(x, e.Op, y))
		}
	}
	return nil
}
