package series

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/grid"
	"github.com/paulmach/orb"
)

func s2Spec(scl float64, red float64) sceneSpec {
	return sceneSpec{collection: "sentinel-2-l2a", props: map[string]any{"s2:processing_baseline": "03.01"},
		srs: "EPSG:32721", x0: 600000, y0: 8700000, res: 10,
		assets: []assetSpec{
			{key: "red", dtype: godal.UInt16, background: 1500},
			{key: "nir", dtype: godal.UInt16, background: 1600},
			{key: "swir16", factor: 2, dtype: godal.UInt16, background: 1700},
			{key: "swir22", factor: 2, dtype: godal.UInt16, background: 1800},
			{key: "scl", factor: 2, dtype: godal.Byte, background: 4},
		},
		cells: []cellSpec{
			{2, 3, map[string]float64{"red": red, "nir": 3600, "swir16": 2500, "swir22": 1500, "scl": scl}},
			{12, 12, map[string]float64{"red": red, "nir": 3600, "swir16": 2500, "swir22": 1500, "scl": 4}},
		},
	}
}

func TestBadInputSkippedAndCounted(t *testing.T) {
	dir := t.TempDir()
	var feats []map[string]any
	good, pts := s2Spec(4, 1200).build(t, dir, "good", "2024-01-01T13:00:00Z")
	feats = append(feats, good)
	// Same date, overlapping tile: cell a cloudy here, clear in "good";
	// cell b clear in both (red 2400 here): "good" < "zdup" wins.
	dup, _ := s2Spec(9, 2400).build(t, dir, "zdup", "2024-01-01T13:00:05Z")
	feats = append(feats, dup)

	noSwir, _ := s2Spec(4, 1200).build(t, dir, "noswir", "2024-01-06T13:00:00Z")
	delete(noSwir["assets"].(map[string]any), "swir22")
	feats = append(feats, noSwir)

	corrupt, _ := s2Spec(4, 1200).build(t, dir, "corrupt", "2024-01-11T13:00:00Z")
	if err := os.WriteFile(filepath.Join(dir, "corrupt_red.tif"), []byte("II*\x00 this is not a TIFF"), 0o644); err != nil {
		t.Fatal(err)
	}
	feats = append(feats, corrupt)

	ftp, _ := s2Spec(4, 1200).build(t, dir, "ftp", "2024-01-16T13:00:00Z")
	ftp["assets"].(map[string]any)["nir"] = map[string]any{"href": "ftp://example.com/nir.tif"}
	feats = append(feats, ftp)

	missing, _ := s2Spec(4, 1200).build(t, dir, "missingfile", "2024-01-21T13:00:00Z")
	missing["assets"].(map[string]any)["scl"] = map[string]any{"href": "nowhere/scl.tif"}
	feats = append(feats, missing)

	nocrs, _ := s2Spec(4, 1200).build(t, dir, "nocrs", "2024-01-26T13:00:00Z")
	writeTIF(t, filepath.Join(dir, "nocrs_red.tif"), raster{w: 16, h: 16, dtype: godal.UInt16, background: 1200})
	feats = append(feats, nocrs)

	// Outside the catalog's folder: refused by the default rule.
	sub := t.TempDir()
	outside, _ := s2Spec(4, 1200).build(t, sub, "outsideprefix", "2024-01-31T13:00:00Z")
	for _, a := range outside["assets"].(map[string]any) {
		a.(map[string]any)["href"] = filepath.Join(sub, a.(map[string]any)["href"].(string))
	}
	feats = append(feats, outside)

	nodate, _ := s2Spec(4, 1200).build(t, dir, "nodate", "2024-02-05T13:00:00Z")
	delete(nodate["properties"].(map[string]any), "datetime")
	feats = append(feats, nodate)

	// Far away: must not be selected.
	far, _ := s2Spec(4, 1200).build(t, dir, "far", "2024-02-10T13:00:00Z")
	far["bbox"] = []float64{10, 10, 11, 11}
	far["geometry"] = nil
	feats = append(feats, far)

	writeJSON(t, filepath.Join(dir, "catalog.json"), collection(feats...))
	cat, errs := LoadCatalog(context.Background(), filepath.Join(dir, "catalog.json"), CatalogOptions{})
	if len(errs) != 1 || !errors.Is(errs[0], ErrMalformedItem) || !strings.Contains(errs[0].Error(), "nodate") || !strings.Contains(errs[0].Error(), "datetime") {
		t.Errorf("catalog errors %v, want one naming item nodate and its datetime", errs)
	}
	if len(cat.Items) != 9 {
		t.Fatalf("%d items, want 9", len(cat.Items))
	}
	g := fieldAround("f1", 0.0002, pts...)
	obs, st, err := Sample(context.Background(), cat, []grid.Grid{g}, Options{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	wantSkipped := map[SkipReason]int{"missing-asset": 1, "unreadable": 2, "bad-href": 2, "no-crs": 1}
	for k, v := range wantSkipped {
		if st.Skipped[k] != v {
			t.Errorf("Skipped[%s] = %d, want %d (all %v)", k, st.Skipped[k], v, st.Skipped)
		}
	}
	if st.Scenes != 8 || st.ScenesRead != 2 {
		t.Errorf("Scenes %d ScenesRead %d, want 8 and 2", st.Scenes, st.ScenesRead)
	}
	wantItems := map[string]string{"corrupt": "red", "ftp": "nir", "missingfile": "scl", "nocrs": "red", "outsideprefix": "red", "noswir": "swir22"}
	for _, p := range st.Problems {
		k, ok := wantItems[p.Item]
		if !ok {
			t.Errorf("unexpected problem %v", p)
			continue
		}
		if !strings.Contains(p.Asset, k) && p.Item != "outsideprefix" {
			t.Errorf("problem %v names asset %q, want %q", p, p.Asset, k)
		}
		delete(wantItems, p.Item)
	}
	if len(wantItems) != 0 {
		t.Errorf("no problem reported for %v", wantItems)
	}
	// Two cells, one date after collapsing: both from "good".
	if len(obs) != 2 {
		t.Fatalf("%d observations, want 2: %+v", len(obs), obs)
	}
	for _, o := range obs {
		if o.ItemID != "good" || o.Mask != "" || !near(float64(o.NDVI), 0.5) || !near(float64(o.NDTI), 0.25) {
			t.Errorf("obs %+v, want item good, NDVI 0.5, NDTI 0.25", o)
		}
	}
}

func TestCatalogForms(t *testing.T) {
	dir := t.TempDir()
	a, pts := s2Spec(4, 1200).build(t, dir, "a", "2024-01-01T13:00:00Z")
	b, _ := s2Spec(4, 1200).build(t, dir, "b", "2024-03-01T13:00:00Z")
	c, _ := s2Spec(4, 1200).build(t, dir, "c", "2024-02-01T13:00:00Z")
	// Directory of items.
	items := filepath.Join(dir, "items")
	if err := os.Mkdir(items, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, it := range []map[string]any{a, b, c} {
		cp := map[string]any{}
		for k, v := range it {
			cp[k] = v
		}
		// hrefs are relative to the catalog file: one level up here.
		as := map[string]any{}
		for k, v := range it["assets"].(map[string]any) {
			as[k] = map[string]any{"href": "../" + v.(map[string]any)["href"].(string)}
		}
		cp["assets"] = as
		writeJSON(t, filepath.Join(items, cp["id"].(string)+".json"), cp)
	}
	// NDJSON with a broken line in the middle.
	var nd strings.Builder
	for i, it := range []map[string]any{a, b, c} {
		data, _ := jsonMarshal(it)
		nd.Write(data)
		nd.WriteString("\n")
		if i == 0 {
			nd.WriteString(`{"id": "broken", "type": "Feature", "properties": {"datetime": "yesterday"}, "bbox": [0,0,1,1], "assets": {}}` + "\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "items.ndjson"), []byte(nd.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(dir, "catalog.json"), collection(a, b, c))
	g := fieldAround("f1", 0.0002, pts...)
	for _, src := range []string{"catalog.json", "items", "items.ndjson"} {
		t.Run(src, func(t *testing.T) {
			// Items in a folder name files one level up, outside the
			// catalog's folder: allowed explicitly.
			cat, errs := LoadCatalog(context.Background(), filepath.Join(dir, src), CatalogOptions{AllowHrefPrefixes: []string{dir}})
			if src == "items.ndjson" {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), "broken") || !strings.Contains(errs[0].Error(), "line 2") {
					t.Errorf("errors %v, want one naming item broken on line 2", errs)
				}
			} else if len(errs) != 0 {
				t.Errorf("errors %v", errs)
			}
			if cat == nil || len(cat.Items) != 3 {
				t.Fatalf("catalog %+v", cat)
			}
			if ids := []string{cat.Items[0].ID, cat.Items[1].ID, cat.Items[2].ID}; ids[0] != "a" || ids[1] != "c" || ids[2] != "b" {
				t.Errorf("items %v, want sorted by datetime a c b", ids)
			}
			sel := cat.Select(g.Field, mustTime("2024-01-15"), mustTime("2024-03-01"))
			if len(sel) != 2 || sel[0].ID != "c" || sel[1].ID != "b" {
				t.Errorf("Select = %v, want c b", sel)
			}
			away := grid.Field{ID: "away", Geometry: orb.MultiPolygon{{{{10, 10}, {10.1, 10}, {10.1, 10.1}, {10, 10.1}, {10, 10}}}}}
			if s := cat.Select(away, time.Time{}, time.Time{}); len(s) != 0 {
				t.Errorf("Select(away) = %v, want none", s)
			}
			obs, st, err := Sample(context.Background(), cat, []grid.Grid{g}, Options{})
			if err != nil || len(obs) != 6 || st.Masked[""] != 6 {
				t.Errorf("Sample: %d obs, stats %+v, err %v", len(obs), st, err)
			}
		})
	}
}

func TestSampleCancelled(t *testing.T) {
	dir := t.TempDir()
	it, pts := s2Spec(4, 1200).build(t, dir, "a", "2024-01-01T13:00:00Z")
	writeJSON(t, filepath.Join(dir, "catalog.json"), collection(it))
	cat, _ := LoadCatalog(context.Background(), filepath.Join(dir, "catalog.json"), CatalogOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := Sample(ctx, cat, []grid.Grid{fieldAround("f", 0.0002, pts...)}, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Sample(cancelled) error %v, want context.Canceled", err)
	}
}

func TestCollapsePrefersValid(t *testing.T) {
	nan := float32(math.NaN())
	d := mustTime("2024-01-01")
	in := []Obs{
		{FieldID: "f", CellID: "a", Date: d, Collection: "s2", ItemID: "t2", NDVI: 0.4, NDTI: 0.1},
		{FieldID: "f", CellID: "a", Date: d, Collection: "s2", ItemID: "t1", NDVI: nan, NDTI: nan, Mask: "cloud"},
		{FieldID: "f", CellID: "a", Date: d, Collection: "s2", ItemID: "t3", NDVI: 0.5, NDTI: 0.2},
		{FieldID: "f", CellID: "b", Date: d, Collection: "s2", ItemID: "t1", NDVI: 0.3, NDTI: nan, Mask: "ndti:nodata"},
		{FieldID: "f", CellID: "b", Date: d, Collection: "s2", ItemID: "t0", NDVI: nan, NDTI: nan, Mask: "outside-scene"},
	}
	out := collapse(in)
	if len(out) != 2 || out[0].ItemID != "t2" || out[1].ItemID != "t1" {
		t.Errorf("collapse = %+v, want a from t2 (valid, smaller id), b from t1", out)
	}
}

func TestMODISEligibility(t *testing.T) {
	dir := t.TempDir()
	spec := sceneSpec{collection: "modis-13Q1-061", srs: sinusoidal, x0: -6064553.374, y0: -1302586.208, res: 231.656,
		assets: []assetSpec{
			{key: "250m_16_days_NDVI", dtype: godal.Int16, background: 5000},
			{key: "250m_16_days_pixel_reliability", dtype: godal.Byte, background: 0},
		},
		cells: []cellSpec{{2, 3, nil}, {9, 4, nil}, {5, 12, nil}},
	}
	it, pts := spec.build(t, dir, "m", "2024-01-01T00:00:00Z")
	writeJSON(t, filepath.Join(dir, "catalog.json"), collection(it))
	eligible := fieldAround("big", 0.001, pts...)
	eligible.Cells[1].MODIS = false // its MODIS pixel leaves the talhão
	small := fieldAround("small", 0.001, pts...)
	small.MODISEligible = false
	obs, st := sampleDir(t, filepath.Join(dir, "catalog.json"), []grid.Grid{eligible, small}, Options{})
	if len(obs) != 2 || obs[0].FieldID != "big" || obs[1].FieldID != "big" || obs[0].CellID != "a" || obs[1].CellID != "c" {
		t.Errorf("obs %+v, want big/a and big/c only", obs)
	}
	if st.Skipped["modis-ineligible-cell"] != 1 || st.Skipped["modis-ineligible-field"] != 3 {
		t.Errorf("skipped %v, want 1 ineligible cell and 3 cells of an ineligible field", st.Skipped)
	}
	for _, o := range obs {
		if !near(float64(o.NDVI), 0.5) || !math.IsNaN(float64(o.NDTI)) {
			t.Errorf("obs %+v, want NDVI 0.5 and no NDTI", o)
		}
	}
}
