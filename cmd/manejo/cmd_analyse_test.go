package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
)

// TestAnalyseCLI: manejo analyse checks its flags before reading anything,
// refuses a table it cannot read with the file and the missing column, and
// analyses a table whose one talhão has a bad row: that talhão fails with
// the row and column named (run.json and stderr, exit 3), the other gets
// its indicators.
func TestAnalyseCLI(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, _, stderr := runCLI(t, "analyse", "--out", out, "--season", "2026/2027", "--satellite-codes", "s2=S01")
	if code != exitUsage || !strings.Contains(stderr, "--observations is required") {
		t.Errorf("no --observations: exit %d, %q", code, stderr)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("field_id,point_id,lon,lat,ndvi\nA,1,-55,-12,0.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "analyse", "--observations", bad, "--out", out, "--season", "2026/2027", "--satellite-codes", "s2=S01")
	if code != exitUsage || !strings.Contains(stderr, bad+" row 1: no column date") {
		t.Errorf("table without date: exit %d, %q", code, stderr)
	}

	// Talhão GOOD: a soybean–maize NDVI year after year every 10 days;
	// talhão BAD: the same with an NDVI written as a DN on line 3.
	var b strings.Builder
	b.WriteString("field_id,point_id,lon,lat,date,ndvi\n")
	line := 1
	for d := time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC); d.Before(time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 10) {
		doy := float64(d.YearDay())
		v := 0.2 + 0.65*math.Max(0, math.Cos(2*math.Pi*(doy-15)/365))
		for _, f := range []string{"GOOD", "BAD"} {
			line++
			val := fmt.Sprintf("%.4f", v)
			if f == "BAD" && line == 3 {
				val = "8123"
			}
			fmt.Fprintf(&b, "%s,p1,-55.6,-11.8,%s,%s\n", f, d.Format(time.DateOnly), val)
		}
	}
	table := filepath.Join(dir, "obs.csv")
	if err := os.WriteFile(table, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "analyse", "--observations", table, "--collection", "s2", "--out", out, "--season", "2026/2027",
		"--satellite-codes", "s2=S01", "--quiet")
	if code != exitPartial || !strings.Contains(stderr, "BAD (failed): "+table+" row 3 column ndvi (talhão BAD): 8123 outside −1..1") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	m, err := export.ReadManifest(mustOpen(t, filepath.Join(out, "run.json")))
	if err != nil || m.Status.Total != 2 || m.Status.Failed != 1 || m.Parameters["observations"] != table {
		t.Fatalf("run.json %+v, %v", m, err)
	}
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(out))
	if err != nil || len(inds) != 1 || inds[0].FieldID != "GOOD" || len(inds[0].CSeasons) != 3 {
		t.Fatalf("indicators %+v, %v", inds, err)
	}
	if !strings.Contains(strings.Join(inds[0].Reasons, "; "), "area: the observation table gives no area_ha") {
		t.Errorf("reasons %q do not say the area is unknown", inds[0].Reasons)
	}
	cycles, _ := export.ReadDataset[export.CycleRow](os.DirFS(out))
	if len(cycles) != 3 {
		t.Errorf("%d cycles, want one a year over the 3 assessed years: %+v", len(cycles), cycles)
	}
	for _, c := range cycles {
		if c.Cycle != 1 {
			t.Errorf("cycle %+v, want the 1ª safra", c)
		}
	}
	// The output is a run's: report and inspect read it.
	html := filepath.Join(dir, "report.html")
	if code, _, stderr := runCLI(t, "report", "--in", out, "--out", html); code != 0 {
		t.Errorf("report of an analysis: exit %d, %q", code, stderr)
	} else if b, _ := os.ReadFile(html); !strings.Contains(string(b), "GOOD") {
		t.Errorf("report of an analysis does not name talhão GOOD")
	}
	if code, stdout, stderr := runCLI(t, "inspect", out); code != 0 || !strings.Contains(stdout, "GOOD") || !strings.Contains(stdout, "BAD") {
		t.Errorf("inspect of an analysis: exit %d, %q, %q", code, stdout, stderr)
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
