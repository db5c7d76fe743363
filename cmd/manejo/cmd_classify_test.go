package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/manejo/manejo/classify"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sinm"
)

var classifyData = filepath.Join("..", "..", "testdata", "classify")

func runClassifyCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = runMain(context.Background(), append([]string{"classify"}, args...), &o, &e)
	return code, o.String(), e.String()
}

func decodeResults(t *testing.T, s string) map[string]classify.Explanation {
	t.Helper()
	var rs []classify.Explanation
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		t.Fatalf("decode JSON: %v\n%s", err, s)
	}
	m := map[string]classify.Explanation{}
	for _, r := range rs {
		m[r.FieldID] = r
	}
	return m
}

func lvl(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// TestClassifyCLIExample runs the documented example (docs/classify.md) and
// checks each talhão's level, deciding rule and classification.parquet.
func TestClassifyCLIExample(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runClassifyCLI(t,
		"--soil", filepath.Join(classifyData, "soil.csv"), "--crops", filepath.Join(classifyData, "crops.csv"),
		"--rs-csv", filepath.Join(classifyData, "rs.csv"), "--ze", "milho=60", "--format", "json", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := decodeResults(t, stdout)
	want := map[string]struct {
		level    int
		deciding string
		missing  string
	}{
		"T01": {4, "IN 3.2", ""},
		"T02": {1, "IN 3.2.1 I", ""},            // slope 6.4 %, contour 40 %
		"T03": {2, "Portaria 349 3.2.1 IV", ""}, // milho between grasses only
		"T04": {0, "Portaria 349 3.4", ""},      // effective depth 45 cm < Ze 60 cm
		"T05": {0, "IN 2.2", "c"},               // C not measured
		"T06": {2, "IN 3.2", ""},                // Mi 2.67 (V b also fires, no change)
	}
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for id, w := range want {
		r := got[id]
		if lvl(r.Level) != w.level || r.DecidingRule != w.deciding || strings.Join(r.Missing, ",") != w.missing {
			t.Errorf("%s: level %d deciding %q missing %v; want %d %q %q", id, lvl(r.Level), r.DecidingRule, r.Missing, w.level, w.deciding, w.missing)
		}
		if len(r.Indicators) != 6 {
			t.Errorf("%s: %d indicators, want 6", id, len(r.Indicators))
		}
	}
	if r := got["T02"]; len(r.Rules) != 1 || lvl(r.Rules[0].Before) != 4 || lvl(r.Rules[0].After) != 1 {
		t.Errorf("T02 rules = %+v, want contour NM4 → NM1", r.Rules)
	}
	if r := got["T04"]; r.Mi == nil || *r.Mi != 3.1667 || r.Level != nil {
		t.Errorf("T04: Mi %v level %v, want 3.1667 and null", r.Mi, r.Level)
	}
	if r := got["T05"]; r.Mi != nil || r.Indicators["c"].Value != nil || r.Indicators["c"].Level != nil {
		t.Errorf("T05: Mi %v, c %+v; want nulls", r.Mi, r.Indicators["c"])
	}

	rows, err := parquet.ReadFile[export.ClassificationRow](filepath.Join(out, "classification.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("classification.parquet: %d rows, want 6", len(rows))
	}
	for _, row := range rows {
		w := want[row.FieldID]
		l := 0
		if row.Level != nil {
			l = int(*row.Level)
		}
		if l != w.level || row.DecidingRule != w.deciding {
			t.Errorf("parquet %s: level %d deciding %q, want %d %q", row.FieldID, l, row.DecidingRule, w.level, w.deciding)
		}
		var ex classify.Explanation
		if err := json.Unmarshal([]byte(row.Explanation), &ex); err != nil || ex.FieldID != row.FieldID {
			t.Errorf("parquet %s: explanation %q: %v", row.FieldID, row.Explanation, err)
		}
	}
	if r := rows[1]; r.FieldID != "T02" || len(r.Rules) != 1 || !strings.HasPrefix(r.Rules[0], "IN 3.2.1 I: NM4 → NM1") {
		t.Errorf("parquet T02 rules = %q", r.Rules)
	}

	// The table names every talhão and its deciding rule.
	code, table, _ := runClassifyCLI(t, "--soil", filepath.Join(classifyData, "soil.csv"), "--crops", filepath.Join(classifyData, "crops.csv"),
		"--rs-csv", filepath.Join(classifyData, "rs.csv"))
	if code != exitOK || !strings.Contains(table, "T03       milho  —") || !strings.Contains(table, "missing: ze_cm") {
		t.Errorf("table without --ze should leave maize not classifiable (missing ze_cm):\n%s", table)
	}
}

// TestClassifyCLIRunFolder reads T, C, slope and crop from a run folder's
// indicators.parquet (written by export) and contour from rs.csv.
func TestClassifyCLIRunFolder(t *testing.T) {
	dir := t.TempDir()
	f := func(v float64) *float64 { return &v }
	i32 := func(v int32) *int32 { return &v }
	rows := []export.IndicatorRow{
		{FieldID: "T01", Crop: "soja", TYears: f(9), TLevel: i32(4), CPct: f(93), CLevel: i32(4), SlopeMeanPct: f(1.8), Status: export.StatusOK},
		{FieldID: "T02", Crop: "soja", TYears: f(9), TLevel: i32(4), CPct: f(93), CLevel: i32(4), SlopeMeanPct: f(6.4), Status: export.StatusOK},
		// Censored T with ≥ 8 years of history: level decided, lower bound used.
		{FieldID: "T04", Crop: "soja", TCensored: true, TYearsMin: f(9), TLevel: i32(4), CPct: f(72), SlopeMeanPct: f(2), Status: export.StatusOK},
		// Censored T with a short history: T missing with the run's reason.
		{FieldID: "T06", Crop: "soja", TCensored: true, TYearsMin: f(4), CPct: f(65), SlopeMeanPct: f(1), Status: export.StatusPartial,
			Reasons: []string{"T: insufficient history: no soil revolving in 4 full years"}},
	}
	var buf bytes.Buffer
	if err := export.Write(&buf, rows, export.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "indicators.parquet"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// Issue 28 point 3: T02 declares plantioContorno 0 in its payload (the
	// talhões file's declaration): read as contour on 0 % of the area, so
	// IN 3.2.1 I applies (slope 6.4 %) instead of "missing contour_pct".
	if err := os.MkdirAll(filepath.Join(dir, "sinm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sinm.PayloadName("T02")), []byte(`{"plantioContorno":0,"terraceamento":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runClassifyCLI(t, "--soil", filepath.Join(classifyData, "soil.csv"), "--crops", filepath.Join(classifyData, "crops.csv"),
		"--rs", dir, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r := decodeResults(t, stdout)["T02"]; lvl(r.Level) != 1 || len(r.Missing) > 0 || !strings.Contains(fmt.Sprint(r.Rules), "contour planting on 0 %") {
		t.Errorf("T02 declared plantioContorno 0: level %d, missing %v, rules %v; want NM1 by IN 3.2.1 I", lvl(r.Level), r.Missing, r.Rules)
	}
	// A contour_pct of --rs-csv overrides the declaration.
	contour := filepath.Join(t.TempDir(), "contour.csv")
	if err := os.WriteFile(contour, []byte("field_id,crop,t_years,c_pct,slope_pct,contour_pct\nT02,,,,,90\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runClassifyCLI(t, "--soil", filepath.Join(classifyData, "soil.csv"), "--crops", filepath.Join(classifyData, "crops.csv"),
		"--rs", dir, "--rs-csv", contour, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := decodeResults(t, stdout)
	if r := got["T01"]; lvl(r.Level) != 4 {
		t.Errorf("T01 level %d, want 4", lvl(r.Level))
	}
	if r := got["T02"]; lvl(r.Level) != 4 { // contour 90 % from rs.csv: no downgrade
		t.Errorf("T02 level %d (%v), want 4", lvl(r.Level), r.Rules)
	}
	if r := got["T04"]; lvl(r.Indicators["t"].Level) != 4 || !strings.Contains(r.Indicators["t"].Detail, "lower bound") {
		t.Errorf("T04 t = %+v, want level 4 from the censored lower bound", r.Indicators["t"])
	}
	if r := got["T06"]; r.Level != nil || strings.Join(r.Missing, ",") != "t" || !strings.Contains(r.Indicators["t"].Detail, "insufficient history") {
		t.Errorf("T06: level %v missing %v t %+v; want not classifiable, missing t with the run's reason", r.Level, r.Missing, r.Indicators["t"])
	}
	// T03 and T05 are in soil.csv and crops.csv but not in the run: T and C missing.
	if r := got["T05"]; strings.Join(r.Missing, ",") != "t,c,slope_pct" {
		t.Errorf("T05 missing %v, want t,c,slope_pct", r.Missing)
	}
}

func TestClassifyCLIBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crops := filepath.Join(classifyData, "crops.csv")
	rs := filepath.Join(classifyData, "rs.csv")
	soil := write("soil.csv", "field_id,ctc_0_20,v_pct_0_20,ca_20_40,m_pct_20_40,effective_depth_cm\n"+
		"T01,8.2,61,1.8,3,150\nT02,8.2,abc,1.8,3,150\nT06,12.3,152,0.8,12,120\n")
	code, stdout, stderr := runClassifyCLI(t, "--soil", soil, "--crops", crops, "--rs-csv", rs, "--format", "json")
	if code != exitPartial {
		t.Fatalf("exit %d, want %d (partial)", code, exitPartial)
	}
	if !strings.Contains(stderr, "talhão T02") || !strings.Contains(stderr, `v_pct_0_20 = "abc" is not a number`) ||
		!strings.Contains(stderr, "talhão T06") || !strings.Contains(stderr, "v_pct_0_20 = 152 outside [0, 100]") {
		t.Errorf("stderr should name the talhão, file, line and column:\n%s", stderr)
	}
	got := decodeResults(t, stdout)
	if _, ok := got["T02"]; ok || lvl(got["T01"].Level) != 4 {
		t.Errorf("T02 should be left out and T01 classified: %v", got)
	}

	// A missing column is fatal and names the column.
	bad := write("bad.csv", "field_id,ctc,v_pct_0_20\nT01,1,2\n")
	code, _, stderr = runClassifyCLI(t, "--soil", bad, "--crops", crops, "--rs-csv", rs)
	if code != exitFatal || !strings.Contains(stderr, "missing column(s) ctc_0_20, ca_20_40, m_pct_20_40, effective_depth_cm") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}

	// Semicolons and decimal commas (pt-BR spreadsheets) are read.
	semi := write("soil-br.csv", "field_id;ctc_0_20;v_pct_0_20;ca_20_40;m_pct_20_40;effective_depth_cm\nT01;8,2;61,5;1,8;3;150\n")
	code, stdout, stderr = runClassifyCLI(t, "--soil", semi, "--crops", crops, "--rs-csv", rs, "--format", "json")
	if r := decodeResults(t, stdout)["T01"]; lvl(r.Level) != 4 || *r.Indicators["v_pct"].Value != 61.5 {
		t.Errorf("semicolon CSV: %+v (exit %d, %s)", r, code, stderr)
	}

	for _, args := range [][]string{
		{"--crops", crops, "--rs-csv", rs},
		{"--soil", soil, "--rs-csv", rs},
		{"--soil", soil, "--crops", crops},
		{"--soil", soil, "--crops", crops, "--rs-csv", rs, "--format", "xml"},
		{"--soil", soil, "--crops", crops, "--rs-csv", rs, "--ze", "trigo=50"},
		{"--soil", soil, "--crops", crops, "--rs-csv", rs, "--agri-year", "2025"},
	} {
		if code, _, _ := runClassifyCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
