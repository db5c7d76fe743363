package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFixture measures testdata/mod, whose figures are counted by hand in
// its files' comments and below.
func TestFixture(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs(filepath.Join("testdata", "mod"))
	pkgs, err := walk(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || pkgs[0].Dir != "p" {
		t.Fatalf("packages %+v, want p alone", pkgs)
	}
	p := pkgs[0]
	// p.go: 14 lines; A spans 3 lines, B, T.m 1 each.
	if p.Files != 1 || p.Lines != 14 || p.MaxFile != 14 || p.MaxFileAt != "p/p.go" || len(p.Big) != 0 {
		t.Errorf("files %d, lines %d, largest %s (%d), big %v; want 1, 14, p/p.go (14), none", p.Files, p.Lines, p.MaxFileAt, p.MaxFile, p.Big)
	}
	if !slices.Equal(p.Funcs, []int{3, 1, 1}) {
		t.Errorf("function lengths %v, want [3 1 1]", p.Funcs)
	}
	// A and T documented, B not; the method of T is unexported.
	if p.Exported != 3 || p.Documented != 2 {
		t.Errorf("documented %d of %d, want 2 of 3", p.Documented, p.Exported)
	}
	if !slices.Equal(p.Flags, []string{"slow", "out", "fast"}) {
		t.Errorf("flags %v, want slow out fast", p.Flags)
	}
	var names []string
	for _, s := range p.Skips {
		names = append(names, s[strings.Index(s, ":")+1:])
	}
	want := []string{
		"TestSlow (flag: needSlow: !*slow)",
		`TestOut (flag: *out == "")`,
		`TestEnv (env: dir == "" || testing.Short())`,
	}
	if !slices.Equal(names, want) {
		t.Errorf("always skipped %q, want %q", names, want)
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	xs := []int{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for p, want := range map[float64]int{90: 9, 100: 10, 50: 5, 10: 1} {
		if got := percentile(xs, p); got != want {
			t.Errorf("p%v = %d, want %d", p, got, want)
		}
	}
	if percentile(nil, 90) != 0 {
		t.Error("p90 of nothing is not 0")
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := run(&b, filepath.Join("testdata", "mod"), true, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| tests always skipped under make test (files) | 3 (1) |",
		"| … of which behind a custom test flag (files, their lines) | 2 (1, 49) |",
		"| exported names documented | 2 / 3 (66.7 %) |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
