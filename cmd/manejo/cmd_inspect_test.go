package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
)

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	rows := []export.IndicatorRow{
		{FieldID: "MT-SIN-002", Crop: "milho", AreaHa: 242.63, CellSizeHa: 5, NCells: 46, Sensors: []string{"landsat-c2-l2", "sentinel-2-l2a"},
			TYears: new(0.77), TLevel: new(int32(1)), CPct: new(79.45), CLevel: new(int32(3)), SlopeMeanPct: new(3.64), ContourRequired: new(true), Status: export.StatusOK},
		{FieldID: "MT-SIN-001", Crop: "soja", AreaHa: 31.2, CellSizeHa: 1, NCells: 28, TCensored: true, TYearsMin: new(2.9),
			Status: export.StatusFailed, Reasons: []string{"slope: DEM does not cover the talhão"}},
	}
	// Two parts, as a sharded run writes them.
	for k, r := range rows {
		var b bytes.Buffer
		if err := export.Write(&b, []export.IndicatorRow{r}, export.Options{}); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, export.PartName("indicators", k, 2))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var m bytes.Buffer
	export.WriteManifest(&m, export.Manifest{Version: "v0.9.0", FinishedAt: time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC),
		Failures: []export.Failure{{FieldID: "MT-SIN-001", Status: export.StatusFailed, Reason: "slope"}}})
	os.WriteFile(filepath.Join(dir, "run.json"), m.Bytes(), 0o644)

	var out, errb bytes.Buffer
	code := runMain(context.Background(), []string{"inspect", dir}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{
		"manejo v0.9.0 run, finished 2026-11-29 18:00 UTC\n",
		"MT-SIN-002  milho  242.6    46     landsat-c2-l2,sentinel-2-l2a  0.8      1        79     3        3.6        required  ok",
		"MT-SIN-001  soja   31.2     28     -                             ≥2.9     -        -      -        -          -         failed",
		"2 talhões: 1 ok, 0 partial, 1 failed, 0 incomplete",
		"  MT-SIN-001 (failed)\n    slope: DEM does not cover the talhão\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	if code := runMain(context.Background(), []string{"inspect", dir, "--status", "ok", "--reasons=false"}, &out, &errb); code != exitOK || strings.Contains(out.String(), "MT-SIN-001  soja") {
		t.Errorf("--status ok: exit %d\n%s", code, out.String())
	}
	if code := runMain(context.Background(), []string{"inspect", t.TempDir()}, &out, &errb); code != exitFatal {
		t.Errorf("inspect of an empty folder: exit %d, want %d", code, exitFatal)
	}
	if code := runMain(context.Background(), []string{"inspect"}, &out, &errb); code != exitUsage {
		t.Errorf("inspect without DIR: exit %d, want %d", code, exitUsage)
	}
}

// TestInspectControlCharacters reproduces defect 12 of issue 19: inspect
// printed ids with control characters raw (an ESC sequence in an id could
// rewrite the operator's terminal; a tab or newline broke the table). Ids
// and reasons with characters that are not printable are shown quoted.
func TestInspectControlCharacters(t *testing.T) {
	dir := t.TempDir()
	evil := "T\x1b[2J\x1b[31m01\n\u200f"
	rows := []export.IndicatorRow{{FieldID: evil, Crop: "soja", Status: export.StatusPartial, Reasons: []string{"talhão " + evil + ": slope\x07 missing"}}}
	var b bytes.Buffer
	if err := export.Write(&b, rows, export.Options{}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, export.PartName("indicators", 0, 1))
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, b.Bytes(), 0o644)
	var m bytes.Buffer
	export.WriteManifest(&m, export.Manifest{Version: "v1", Failures: []export.Failure{{FieldID: "X\x1b]0;pwned\x07", Status: export.StatusFailed, Stage: "read", Reason: "bad\rline"}}})
	os.WriteFile(filepath.Join(dir, "run.json"), m.Bytes(), 0o644)

	var out, errb bytes.Buffer
	if code := runMain(context.Background(), []string{"inspect", dir}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07\r\u200f") {
		t.Errorf("output holds control characters: %q", got)
	}
	for _, want := range []string{`"T\x1b[2J\x1b[31m01\n\u200f"`, `"X\x1b]0;pwned\a"`, `"bad\rline"`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %s:\n%s", want, got)
		}
	}
}

// TestInspectUncertainAndReasons (issue 28 points 9 and 10): a C level
// whose 90 % interval crosses a Tabela 1 limit is marked "?" and listed
// with its interval; a reason listing seasons is written one season per
// line instead of one line a terminal wraps over a screen.
func TestInspectUncertainAndReasons(t *testing.T) {
	rows := []export.IndicatorRow{
		{FieldID: "U", Crop: "soja", CPct: new(61.2), CPctLo: new(55.4), CPctHi: new(67.0), CLevel: new(int32(3)), CLevelUncertain: new(true), Status: export.StatusOK},
		{FieldID: "S", Crop: "soja", CPct: new(20.0), CPctLo: new(18.0), CPctHi: new(22.0), CLevel: new(int32(1)), CLevelUncertain: new(false), Status: export.StatusPartial,
			Reasons: []string{"C: C missing: 2023/2024: no sowing date; 2024/2025: no clear reading; 2025/2026: no crop cycle", "T: no clear observation in the archive"}},
	}
	var b strings.Builder
	if err := printIndicators(&b, rows, nil, "", true); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"61     3?", "20     1  ", "  U: C 61 % (90 % interval 55–67 %), level 3\n",
		"  S (partial)\n    C: C missing:\n      2023/2024: no sowing date\n      2024/2025: no clear reading\n      2025/2026: no crop cycle\n    T: no clear observation in the archive\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "  S: C") {
		t.Errorf("a certain level is listed as uncertain:\n%s", got)
	}
}
