package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const demoTalhoes = "../../testdata/demo/talhoes.geojson"

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runMain(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestGridCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "cells.geojson")
	rep := filepath.Join(dir, "status.json")
	code, stdout, stderr := runCLI(t, "grid", "--fields", demoTalhoes, "--out", out, "--report", rep)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			Geometry struct {
				Type string `json:"type"`
			} `json:"geometry"`
			Properties map[string]any `json:"properties"`
		} `json:"features"`
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fc); err != nil || fc.Type != "FeatureCollection" || len(fc.Features) < 100 {
		t.Fatalf("output: %v, %d features", err, len(fc.Features))
	}
	for _, f := range fc.Features {
		if f.Geometry.Type != "Point" {
			t.Fatalf("geometry %s, want Point", f.Geometry.Type)
		}
		for _, k := range []string{"field_id", "cell_id", "cell_area_ha", "field_area_ha", "cell_size_ha", "border", "modis"} {
			if _, ok := f.Properties[k]; !ok {
				t.Fatalf("property %s missing: %v", k, f.Properties)
			}
		}
	}
	var r gridReport
	b, _ = os.ReadFile(rep)
	if err := json.Unmarshal(b, &r); err != nil || r.OK != 5 || r.Skipped != 0 {
		t.Fatalf("report %s: %v", b, err)
	}
	if !strings.Contains(stderr, "MT-SIN-005 ok") || !strings.Contains(stdout, "5 talhões gridded") {
		t.Errorf("stdout %q stderr %q", stdout, stderr)
	}
}

// TestGridCommandPartial mixes good and bad talhões: the good ones are
// written, the bad ones reported with their reason, exit code 3.
func TestGridCommandPartial(t *testing.T) {
	dir := t.TempDir()
	demo, err := os.ReadFile(demoTalhoes)
	if err != nil {
		t.Fatal(err)
	}
	var fc map[string]any
	json.Unmarshal(demo, &fc)
	feats := fc["features"].([]any)
	var bad []any
	json.Unmarshal([]byte(`[
	 {"type":"Feature","properties":{"id":"BOWTIE"},"geometry":{"type":"Polygon","coordinates":[[[-55.60,-11.80],[-55.59,-11.79],[-55.59,-11.80],[-55.60,-11.79],[-55.60,-11.80]]]}},
	 {"type":"Feature","properties":{"id":"UTM"},"geometry":{"type":"Polygon","coordinates":[[[612000,8695000],[612500,8695000],[612500,8695500],[612000,8695000]]]}},
	 {"type":"Feature","properties":{"id":"MT-SIN-001"},"geometry":{"type":"Polygon","coordinates":[[[-55.60,-11.80],[-55.59,-11.80],[-55.59,-11.79],[-55.60,-11.80]]]}},
	 {"type":"Feature","properties":{"id":"ROAD"},"geometry":{"type":"LineString","coordinates":[[-55.6,-11.8],[-55.5,-11.7]]}}
	]`), &bad)
	fc["features"] = append(feats, bad...)
	in := filepath.Join(dir, "mixed.geojson")
	b, _ := json.Marshal(fc)
	os.WriteFile(in, b, 0o644)
	out := filepath.Join(dir, "cells.geojson")
	rep := filepath.Join(dir, "status.json")
	code, _, stderr := runCLI(t, "grid", "--fields", in, "--out", out, "--report", rep)
	if code != exitPartial {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitPartial, stderr)
	}
	var r gridReport
	b, _ = os.ReadFile(rep)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	// 4 demo talhões ok; MT-SIN-001 twice (both skipped), BOWTIE, UTM, ROAD skipped
	if r.OK != 4 || r.Skipped != 5 {
		t.Fatalf("ok %d skipped %d: %s", r.OK, r.Skipped, b)
	}
	reasons := map[string]string{}
	for _, s := range r.Talhoes {
		if s.Status == "skipped" {
			reasons[s.FieldID] += s.Reason
		}
	}
	for id, want := range map[string]string{
		"BOWTIE":     "self-intersects at lon -55.5950000 lat -11.7950000",
		"UTM":        "look projected",
		"MT-SIN-001": "is used by features 1, 8",
		"ROAD":       "LineString",
	} {
		if !strings.Contains(reasons[id], want) || !strings.Contains(stderr, id+" skipped") {
			t.Errorf("%s: reason %q, want %q (stderr %s)", id, reasons[id], want, stderr)
		}
	}
	cells, _ := os.ReadFile(out)
	if strings.Contains(string(cells), "BOWTIE") || !strings.Contains(string(cells), "MT-SIN-005") {
		t.Errorf("cells file has the wrong talhões")
	}
}

func TestGridCommandUsage(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "c.geojson")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"grid", "--out", out}, exitUsage, "--fields is required"},
		{[]string{"grid", "--fields", demoTalhoes}, exitUsage, "--out is required"},
		{[]string{"grid", "--fields", demoTalhoes, "--out", filepath.Join(dir, "c.txt")}, exitUsage, "want a .geojson or .parquet"},
		{[]string{"grid", "--fields", demoTalhoes, "--out", out, "--cell-ha", "11"}, exitUsage, "--cell-ha 11"},
		{[]string{"grid", "--fields", demoTalhoes, "--out", out, "--cell-ha", "3"}, exitUsage, "MT-SIN-003 (100.00 ha: 5–10 ha)"},
		{[]string{"grid", "--fields", demoTalhoes, "--out", out, "--edge-buffer-m", "-1"}, exitUsage, "--edge-buffer-m"},
		{[]string{"grid", "--fields", filepath.Join(dir, "none.gpkg"), "--out", out}, exitFatal, "none.gpkg"},
		{[]string{"grid", "--help"}, exitOK, "--edge-buffer-m"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("manejo %v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.msg)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed run wrote %s", out)
	}
	// 5 ha suits both classes
	if code, _, stderr := runCLI(t, "grid", "--fields", demoTalhoes, "--out", out, "--cell-ha", "5"); code != exitOK {
		t.Errorf("--cell-ha 5: exit %d %s", code, stderr)
	}
}

func TestGridCommandParquet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cells.parquet")
	code, _, stderr := runCLI(t, "grid", "--fields", demoTalhoes, "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil || len(b) < 8 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
		t.Fatalf("%s is not Parquet (%v)", out, err)
	}
}
