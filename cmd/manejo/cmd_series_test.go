package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/stacapi/stactest"
)

// TestSeriesCommand samples the real Sinop MOD13Q1 cube (23 dates) over a
// 2 km × 2 km talhão through the CLI and reads the Parquet back.
func TestSeriesCommand(t *testing.T) {
	catalog := "../../series/testdata/sinop/catalog.json"
	if _, err := os.Stat("../../testdata/realdata/sits-sinop-mod13q1/tif_23dates"); err != nil {
		t.Fatalf("real data missing (it is part of the repository): %v", err)
	}
	dir := t.TempDir()
	// Around labelled point 7 (Soy_Corn, -55.68369, -11.73679): ~400 ha.
	fields := filepath.Join(dir, "talhoes.geojson")
	gj := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"sinop-7"},"geometry":{"type":"Polygon","coordinates":[[[-55.6929,-11.7458],[-55.6745,-11.7458],[-55.6745,-11.7278],[-55.6929,-11.7278],[-55.6929,-11.7458]]]}}]}`
	if err := os.WriteFile(fields, []byte(gj), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "obs.parquet")
	rep := filepath.Join(dir, "report.json")
	code, _, stderr := runCLI(t, "series", "--fields", fields, "--catalog", catalog, "--out", out, "--report", rep, "--allow-missing-qa", "modis-13Q1-061", "--workers", "2",
		// The catalog names files outside its folder: allowed explicitly.
		"--allow-href-prefix", "../../testdata/realdata/")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	var r seriesReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Scenes != 23 || r.ScenesRead != 23 || r.Talhoes != 1 {
		t.Fatalf("report %s", b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	rows, err := export.Read[export.ObsRow](f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || len(rows) != r.Rows || len(rows)%23 != 0 {
		t.Fatalf("%d rows, report says %d (want a multiple of 23 dates)", len(rows), r.Rows)
	}
	for _, row := range rows {
		if row.NDVI == nil || math.Abs(float64(*row.NDVI)) > 1 || row.NDTI != nil || row.Collection != "modis-13Q1-061" {
			t.Fatalf("row %+v: want NDVI in −1..1, no NDTI (MOD13Q1)", row)
		}
	}

	// The same items served by a STAC API on loopback (hrefs made
	// absolute, pages of 10): the same observations, byte for byte.
	srv := stactest.New(t, absoluteItems(t, catalog))
	apiOut := filepath.Join(dir, "obs-api.parquet")
	realdata, _ := filepath.Abs("../../testdata/realdata/")
	code, _, stderr = runCLI(t, "series", "--fields", fields, "--catalog", srv.URL, "--collections", "modis-13Q1-061", "--out", apiOut,
		"--allow-missing-qa", "modis-13Q1-061", "--workers", "2", "--allow-href-prefix", realdata)
	if code != exitOK {
		t.Fatalf("series against the API: exit %d, stderr %s", code, stderr)
	}
	want, _ := os.ReadFile(out)
	got, _ := os.ReadFile(apiOut)
	if len(want) == 0 || !bytes.Equal(want, got) {
		t.Errorf("observations from the API (%d bytes) differ from the static catalog's (%d bytes)", len(got), len(want))
	}
}

// absoluteItems are the features of a catalog file with their asset hrefs
// made absolute, as an API serves them.
func absoluteItems(t *testing.T, catalog string) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(catalog)
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Features []map[string]any `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatal(err)
	}
	base, _ := filepath.Abs(filepath.Dir(catalog))
	var out []json.RawMessage
	for _, f := range fc.Features {
		for _, a := range f["assets"].(map[string]any) {
			a := a.(map[string]any)
			a["href"] = filepath.Join(base, a["href"].(string))
		}
		d, _ := json.Marshal(f)
		out = append(out, d)
	}
	return out
}

func TestSeriesCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{"series", "--catalog", "c.json", "--out", "o.parquet"},
		{"series", "--fields", "f.geojson", "--out", "o.parquet"},
		{"series", "--fields", "f.geojson", "--catalog", "c.json", "--out", "o.txt"},
		{"series", "--fields", "f.geojson", "--catalog", "c.json", "--out", "o.parquet", "--from", "2024-13-01"},
		{"series", "--fields", "f.geojson", "--catalog", "c.json", "--out", "o.parquet", "--collection-profile", "x=nope"},
	} {
		if code, _, _ := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
