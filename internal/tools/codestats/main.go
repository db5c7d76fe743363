package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", ".", "the module's root folder")
	detail := flag.Bool("detail", false, "also list the big files, the test flags and the always-skipped tests")
	testJSON := flag.String("testjson", "", "a `go test -json` output whose skipped top-level tests to count")
	flag.Parse()
	if err := run(os.Stdout, *root, *detail, *testJSON); err != nil {
		fmt.Fprintln(os.Stderr, "codestats:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, root string, detail bool, testJSON string) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	pkgs, err := walk(abs)
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		for i, s := range p.Skips {
			p.Skips[i] = strings.TrimPrefix(filepath.ToSlash(s), filepath.ToSlash(abs)+"/")
		}
	}
	writeSummary(w, pkgs)
	writePackages(w, pkgs)
	if detail {
		writeDetail(w, pkgs)
	}
	if testJSON != "" {
		return writeRuntimeSkips(w, testJSON)
	}
	return nil
}

// total is the module's sum of its packages.
func total(pkgs []*pkgStats) *pkgStats {
	t := &pkgStats{Dir: "(module)"}
	for _, p := range pkgs {
		t.Files += p.Files
		t.Lines += p.Lines
		if p.MaxFile > t.MaxFile {
			t.MaxFile, t.MaxFileAt = p.MaxFile, p.MaxFileAt
		}
		t.Big = append(t.Big, p.Big...)
		t.Funcs = append(t.Funcs, p.Funcs...)
		t.TestFuncs = append(t.TestFuncs, p.TestFuncs...)
		t.Flags = append(t.Flags, p.Flags...)
		t.Skips = append(t.Skips, p.Skips...)
		t.Exported += p.Exported
		t.Documented += p.Documented
	}
	return t
}

// flagSkips are the skipped tests whose guard reads a custom flag.
func flagSkips(skips []string) []string {
	var out []string
	for _, s := range skips {
		if strings.Contains(s, " (flag: ") {
			out = append(out, s)
		}
	}
	return out
}

// skipLines is the number of lines of the test files the skipped tests
// live in.
func skipLines(pkgs []*pkgStats, skips []string) int {
	files := map[string]bool{}
	for _, s := range skips {
		f, _, _ := strings.Cut(s, ":")
		files[f] = true
	}
	n := 0
	for _, p := range pkgs {
		for f, lines := range p.testLines {
			if files[f] {
				n += lines
			}
		}
	}
	return n
}

// skipFiles is the number of distinct files the skipped tests live in.
func skipFiles(skips []string) int {
	files := map[string]bool{}
	for _, s := range skips {
		f, _, _ := strings.Cut(s, ":")
		files[f] = true
	}
	return len(files)
}

func writeSummary(w io.Writer, pkgs []*pkgStats) {
	t := total(pkgs)
	fmt.Fprintf(w, "## Module\n\n| measure | value |\n|---|---:|\n")
	fmt.Fprintf(w, "| non-test Go files | %d |\n", t.Files)
	fmt.Fprintf(w, "| non-test lines | %d |\n", t.Lines)
	fmt.Fprintf(w, "| largest non-test file (lines) | %s (%d) |\n", t.MaxFileAt, t.MaxFile)
	fmt.Fprintf(w, "| hand-written non-test files over %d lines | %d |\n", bigFile, len(t.Big))
	fmt.Fprintf(w, "| function length p90 / max, non-test (lines) | %d / %d |\n", percentile(t.Funcs, 90), percentile(t.Funcs, 100))
	fmt.Fprintf(w, "| function length p90 / max, test files (lines) | %d / %d |\n", percentile(t.TestFuncs, 90), percentile(t.TestFuncs, 100))
	fmt.Fprintf(w, "| custom test flags | %d |\n", len(t.Flags))
	flagged := flagSkips(t.Skips)
	fmt.Fprintf(w, "| tests always skipped under make test (files) | %d (%d) |\n", len(t.Skips), skipFiles(t.Skips))
	fmt.Fprintf(w, "| … of which behind a custom test flag (files, their lines) | %d (%d, %d) |\n", len(flagged), skipFiles(flagged), skipLines(pkgs, flagged))
	fmt.Fprintf(w, "| exported names documented | %d / %d (%.1f %%) |\n\n", t.Documented, t.Exported, pct(t.Documented, t.Exported))
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

func writePackages(w io.Writer, pkgs []*pkgStats) {
	fmt.Fprintf(w, "## Packages\n\n| package | files | lines | largest file | >%d | func p90/max | test func p90/max | test flags | always-skip tests | documented |\n", bigFile)
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range pkgs {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d/%d | %d/%d | %d | %d | %d/%d |\n",
			p.Dir, p.Files, p.Lines, p.MaxFile, len(p.Big),
			percentile(p.Funcs, 90), percentile(p.Funcs, 100),
			percentile(p.TestFuncs, 90), percentile(p.TestFuncs, 100),
			len(p.Flags), len(p.Skips), p.Documented, p.Exported)
	}
	fmt.Fprintln(w)
}

func writeDetail(w io.Writer, pkgs []*pkgStats) {
	t := total(pkgs)
	fmt.Fprintf(w, "## Non-test files over %d lines\n\n", bigFile)
	for _, p := range pkgs {
		for _, b := range p.Big {
			fmt.Fprintf(w, "- %s\n", b)
		}
	}
	fmt.Fprintf(w, "\n## Custom test flags (%d)\n\n", len(t.Flags))
	for _, p := range pkgs {
		if len(p.Flags) > 0 {
			fmt.Fprintf(w, "- %s: -%s\n", p.Dir, strings.Join(p.Flags, " -"))
		}
	}
	fmt.Fprintf(w, "\n## Tests always skipped under make test (%d)\n\n", len(t.Skips))
	for _, s := range t.Skips {
		fmt.Fprintf(w, "- %s\n", s)
	}
	fmt.Fprintln(w)
}

// writeRuntimeSkips counts the top-level tests a `go test -json` stream
// reported as skipped, per package.
func writeRuntimeSkips(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	count := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var ev struct{ Action, Package, Test string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Action != "skip" || ev.Test == "" || strings.Contains(ev.Test, "/") {
			continue
		}
		count[ev.Package] = append(count[ev.Package], ev.Test)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	var names []string
	n := 0
	for p, ts := range count {
		names = append(names, p)
		n += len(ts)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "## Skipped at run time (%s): %d top-level tests\n\n", filepath.Base(path), n)
	for _, p := range names {
		fmt.Fprintf(w, "- %s: %s\n", p, strings.Join(count[p], " "))
	}
	return nil
}
