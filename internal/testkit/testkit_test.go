package testkit

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestNear(t *testing.T) {
	if !Near(1, 1.04, 0.05) || Near(1, 1.2, 0.1) || Near(math.NaN(), math.NaN(), 1) {
		t.Error("Near")
	}
}

func TestHashTreeAndCSV(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "run"), 0o755)
	for name, s := range map[string]string{"a.csv": "x,y\n1,2\n", "run.json": "{}", "run/log": "z"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if h := HashTree(t, dir); len(h) != 3 {
		t.Errorf("HashTree = %v", h)
	}
	if h := HashTree(t, dir, "run.json", "run/"); len(h) != 1 || h["a.csv"] == "" {
		t.Errorf("HashTree with skips = %v", h)
	}
	recs := ReadCSV(t, filepath.Join(dir, "a.csv"))
	if col := Columns(recs[0]); len(recs) != 2 || col["y"] != 1 || recs[1][1] != "2" {
		t.Errorf("ReadCSV = %v", recs)
	}
}

func TestCPUTime(t *testing.T) {
	a := CPUTime()
	x := 0
	for i := range 10_000_000 {
		x ^= i
	}
	if b := CPUTime(); a <= 0 || b < a {
		t.Errorf("CPUTime: %v then %v (x=%d)", a, b, x)
	}
}
