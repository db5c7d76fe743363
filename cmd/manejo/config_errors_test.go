package main

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigErrorsExitUsage (issue 27, D16 and the minor ones): a command
// line that names an unsupported place, a missing input file, a negative
// count or a flag the catalog cannot honour exits 2 with a message naming
// the flag, before anything is created or any credential is asked for.
// Each case runs in an empty working folder, which must stay empty (a
// --out gs://bucket/x used to create ./gs:/bucket/x and run).
func TestConfigErrorsExitUsage(t *testing.T) {
	data := t.TempDir()
	codes := "sentinel-2-l2a=S01"
	static := filepath.Join(data, "items.json")
	if err := os.WriteFile(static, []byte(`{"type":"FeatureCollection","features":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	obs := filepath.Join(data, "obs.csv")
	if err := os.WriteFile(obs, []byte("field_id,point_id,lon,lat,date,ndvi\nA,1,-55,-12,2025-01-01,0.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(data, "no-such-file.csv")
	run := func(extra ...string) []string {
		return append([]string{"run", "--fields", demoTalhoes, "--catalog", static, "--season", "2026/2027", "--satellite-codes", codes}, extra...)
	}
	analyse := func(extra ...string) []string {
		return append([]string{"analyse", "--observations", obs, "--season", "2026/2027", "--satellite-codes", codes}, extra...)
	}
	t.Setenv("SINM_CLIENT_ID", "")
	t.Setenv("SINM_CLIENT_SECRET", "")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"run --out gs://", run("--out", "gs://bucket/x"), "--out gs://bucket/x: scheme gs is not supported"},
		{"run --cache ftp://", run("--out", "out", "--cache", "ftp://x/y"), "--cache ftp://x/y: scheme ftp is not supported"},
		{"run --out file://", run("--out", "file:///tmp/x"), "--out file:///tmp/x: scheme file is not supported"},
		{"run --out s3:// without bucket", run("--out", "s3:///x"), "want s3://bucket/prefix"},
		{"run --out /vsigs/", run("--out", "/vsigs/b/x"), "GDAL virtual paths cannot be written"},
		{"analyse --out gs://", analyse("--out", "gs://bucket/x"), "--out gs://bucket/x: scheme gs is not supported"},
		{"cache inspect ftp://", []string{"cache", "inspect", "--cache", "ftp://x/y"}, "--cache ftp://x/y: scheme ftp"},
		{"cache prune gs://", []string{"cache", "prune", "--cache", "gs://b/c", "--older-than", "90d"}, "--cache gs://b/c: scheme gs"},
		{"series --out gs://", []string{"series", "--fields", demoTalhoes, "--catalog", static, "--out", "gs://b/o.parquet"}, "--out gs://b/o.parquet: scheme gs"},
		{"report --out gs://", []string{"report", "--in", data, "--out", "gs://b/r.html"}, "--out gs://b/r.html: scheme gs"},
		{"grid --out ftp://", []string{"grid", "--fields", demoTalhoes, "--out", "ftp://h/cells.geojson"}, "--out ftp://h/cells.geojson: scheme ftp"},
		{"catalog --out gs://", []string{"catalog", "search", "--api", "https://127.0.0.1:1/", "--out", "gs://b/items.json"}, "--out gs://b/items.json: scheme gs"},
		{"synth --out s3://", []string{"synth", "--out", "s3://b/synth"}, "--out s3://b/synth: want a local path"},
		{"run --allow-href-prefix http://", run("--out", "out", "--allow-href-prefix", "http://x/"), `--allow-href-prefix "http://x/": scheme "http" is accepted on a loopback host only`},
		{"series --allow-href-prefix http://", []string{"series", "--fields", demoTalhoes, "--catalog", static, "--out", "o.parquet", "--allow-href-prefix", "http://x/"}, "--allow-href-prefix"},
		{"run --sowing missing", run("--out", "out", "--sowing", missing), "--sowing " + missing + ": no such file"},
		{"analyse --sowing missing", analyse("--out", "out", "--sowing", missing), "--sowing " + missing + ": no such file"},
		{"run --satellite-codes-file missing", run("--out", "out", "--satellite-codes-file", missing), "--satellite-codes-file " + missing + ": no such file"},
		{"run --workers -3", run("--out", "out", "--workers", "-3"), "--workers -3: want 0 (the default) or a positive number"},
		{"run --batch-size -1", run("--out", "out", "--batch-size", "-1"), "--batch-size -1"},
		{"analyse --workers -3", analyse("--out", "out", "--workers", "-3"), "--workers -3"},
		{"run --collections with a static catalog", run("--out", "out", "--collections", "sentinel-2-l2a"), "--collections sentinel-2-l2a: --catalog " + static + " is a static catalog"},
		{"series --collections with a static catalog", []string{"series", "--fields", demoTalhoes, "--catalog", static, "--out", "o.parquet", "--collections", "x"}, "is a static catalog"},
		{"sinm submit --rate -1", []string{"sinm", "submit", "--in", data, "--env", "hml", "--rate", "-1"}, "--rate -1: want requests per second ≥ 0"},
		{"sinm submit --rate NaN", []string{"sinm", "submit", "--in", data, "--env", "hml", "--rate", "NaN"}, "--rate NaN"},
		{"sinm submit --in s3://", []string{"sinm", "submit", "--in", "s3://bucket/out", "--env", "hml"}, "--in must be a local folder"},
		{"sinm status --in s3://", []string{"sinm", "status", "--in", "s3://bucket/out", "--env", "hml"}, "--in must be a local folder"},
		{"cache prune --older-than 90", []string{"cache", "prune", "--cache", data, "--older-than", "90"}, "no unit: write 90d for 90 days"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wd := t.TempDir()
			t.Chdir(wd)
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tc.want)
			}
			if strings.Contains(stdout+stderr, "credentials") {
				t.Errorf("asked for credentials before the usage error: %q", stdout+stderr)
			}
			if ents, _ := os.ReadDir(wd); len(ents) > 0 {
				t.Errorf("the working folder got %s", ents[0].Name())
			}
		})
	}
}

// TestCollectionsStaticOverHTTP: --collections with a catalog URL that
// could be a STAC API root but serves a static ItemCollection is a usage
// error naming both, not a run that silently ignores --collections.
func TestCollectionsStaticOverHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":"FeatureCollection","features":[]}`))
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, "run", "--fields", demoTalhoes, "--catalog", srv.URL+"/items.json", "--season", "2026/2027",
		"--satellite-codes", "sentinel-2-l2a=S01", "--out", out, "--collections", "sentinel-2-l2a", "--quiet")
	if code != exitUsage || !strings.Contains(stderr, "--collections sentinel-2-l2a: "+srv.URL+"/items.json is a static catalog, not a STAC API root") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestAnalyseStrayQuote (issue 27 D14): a stray quote at row 1001 of an
// analyse table used to cut both talhões' series there, with a warning in
// run.json only. Now analyse exits 2 naming the file and the row, and
// writes no indicator or payload.
func TestAnalyseStrayQuote(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("field_id,point_id,lon,lat,date,ndvi\n")
	d0 := time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1400 {
		if i+2 == 1001 {
			fmt.Fprintf(&b, "%s,\"p1,-55.6,-11.8,%s,0.5\n", []string{"A", "B"}[i%2], d0.AddDate(0, 0, i/2).Format(time.DateOnly))
			continue
		}
		fmt.Fprintf(&b, "%s,p1,-55.6,-11.8,%s,0.5\n", []string{"A", "B"}[i%2], d0.AddDate(0, 0, i/2).Format(time.DateOnly))
	}
	table := filepath.Join(dir, "obs.csv")
	if err := os.WriteFile(table, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "analyse", "--observations", table, "--collection", "s2", "--out", out, "--season", "2026/2027",
		"--satellite-codes", "s2=S01", "--quiet")
	if code != exitUsage || !strings.Contains(stderr, table+" row 1001: CSV syntax error on line 1401") || !strings.Contains(stderr, "refused whole") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit %d naming %s row 1001", code, stdout, stderr, exitUsage, table)
	}
	if _, err := os.Stat(filepath.Join(out, "indicators.parquet")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("indicators written from a cut table: %v", err)
	}
}

// TestAnalyseMaxCellScenes (issue 27 D15): analyse takes run's
// --max-cell-scenes: a talhão whose points × scenes pass it fails with the
// reason (stderr, exit 3) and the others are analysed; a budget below -1
// is a usage error.
func TestAnalyseMaxCellScenes(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("field_id,point_id,lon,lat,date,ndvi\n")
	dates := 0
	for d := time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC); d.Before(time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 10) {
		dates++
		v := 0.2 + 0.65*math.Max(0, math.Cos(2*math.Pi*(float64(d.YearDay())-15)/365))
		for _, p := range []string{"BIG,p1", "BIG,p2", "BIG,p3", "SMALL,p1"} {
			fmt.Fprintf(&b, "%s,-55.6,-11.8,%s,%.4f\n", p, d.Format(time.DateOnly), v)
		}
	}
	table := filepath.Join(dir, "obs.csv")
	if err := os.WriteFile(table, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"analyse", "--observations", table, "--collection", "s2", "--season", "2026/2027", "--satellite-codes", "s2=S01", "--quiet"}
	code, stdout, stderr := runCLI(t, append(args, "--out", filepath.Join(dir, "out"), "--max-cell-scenes", fmt.Sprint(2*dates))...)
	want := fmt.Sprintf("BIG (failed): %s (talhão BIG): talhão too large for the memory budget: 3 points × %d scenes = %d point-scene pairs, over the cap of %d (--max-cell-scenes)", table, dates, 3*dates, 2*dates)
	if code != exitPartial || !strings.Contains(stderr, want) || !strings.Contains(stdout, "2 talhões: 1 ok") && !strings.Contains(stdout, "2 talhões: 0 ok, 1 partial") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, SMALL analysed and %q", code, stdout, stderr, exitPartial, want)
	}
	if code, _, stderr = runCLI(t, append(args, "--out", filepath.Join(dir, "out2"), "--max-cell-scenes", "-2")...); code != exitUsage || !strings.Contains(stderr, "--max-cell-scenes -2") {
		t.Errorf("--max-cell-scenes -2: exit %d, %q", code, stderr)
	}
}
