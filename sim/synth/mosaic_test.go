package synth

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airbusgeo/godal"
)

// TestMosaic: Options.Tiles lays scenes side by side on the Sentinel-2
// grid (each north-west corner a whole number of scene sides from the
// corner of the real tile, on its 60 m grid), joins them in one catalog
// whose every asset exists, one talhões file with unique ids inside their
// scene, one sowing file and a DEM over all; one tile keeps the ids of a
// plain archive.
func TestMosaic(t *testing.T) {
	o := Options{Out: t.TempDir(), Seed: 5, Fields: 26, Tiles: 4, Start: time.Date(2024, 9, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 9, 30, 0, 0, 0, 0, time.UTC), RevisitDays: 10}
	tr, err := Generate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	side := float64(DefaultSceneSizePx) * pixelM
	if len(tr.Tiles) != 4 || len(tr.Fields) != 26 || len(tr.Items) != 4*3 {
		t.Fatalf("truth: %d tiles, %d talhões, %d items; want 4, 26, 12", len(tr.Tiles), len(tr.Fields), len(tr.Items))
	}
	corners := map[[2]float64]bool{}
	for _, s := range tr.Tiles {
		ulx := math.Floor(math.Floor(s.OriginX/1e5)*1e5/60) * 60
		uly := math.Round(math.Ceil(s.OriginY/1e5)*1e5/60) * 60
		if dx, dy := (s.OriginX-ulx)/side, (uly-s.OriginY)/side; dx != math.Trunc(dx) || dy != math.Trunc(dy) {
			t.Errorf("scene at %.0f, %.0f: %.3f, %.3f scene sides from the Sentinel-2 corner %.0f, %.0f", s.OriginX, s.OriginY, dx, dy, ulx, uly)
		}
		corners[[2]float64{s.OriginX, s.OriginY}] = true
	}
	x0, y0 := tr.Tiles[0].OriginX, tr.Tiles[0].OriginY
	for _, c := range [][2]float64{{x0, y0}, {x0 + side, y0}, {x0, y0 - side}, {x0 + side, y0 - side}} {
		if !corners[c] {
			t.Errorf("no scene at %.0f, %.0f: corners %v", c[0], c[1], corners)
		}
	}
	var cat stacCollection
	if err := readJSON(filepath.Join(o.Out, CatalogFile), &cat); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, it := range cat.Features {
		if ids[it.ID] {
			t.Errorf("item %s twice", it.ID)
		}
		ids[it.ID] = true
		for k, a := range it.Assets {
			if _, err := os.Stat(filepath.Join(o.Out, a.Href)); err != nil {
				t.Errorf("item %s asset %s: %v", it.ID, k, err)
			}
		}
	}
	if len(cat.Features) != 12 || cat.Context.Matched != 12 {
		t.Errorf("catalog: %d items (matched %d), want 12", len(cat.Features), cat.Context.Matched)
	}
	var fc geoFC
	if err := readJSON(filepath.Join(o.Out, FieldsFile), &fc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range fc.Features {
		id := f.Properties.ID
		var k int
		if _, err := fmt.Sscanf(id, "T%02d-SYN-", &k); err != nil || k < 1 || k > 4 || seen[id] {
			t.Errorf("talhão %s: repeated or without its tile's prefix", id)
			continue
		}
		k--
		seen[id] = true
		bb := tr.Tiles[k].BBox
		for _, p := range f.Geometry.Coordinates[0] {
			if p[0] < bb[0] || p[0] > bb[2] || p[1] < bb[1] || p[1] > bb[3] {
				t.Errorf("talhão %s at %v outside its scene %v", id, p, bb)
				break
			}
		}
	}
	if len(seen) != 26 {
		t.Errorf("%d talhões, want 26", len(seen))
	}
	dem, err := godal.Open(filepath.Join(o.Out, DEMFile))
	if err != nil {
		t.Fatal(err)
	}
	defer dem.Close()
	wgs, err := godal.NewSpatialRefFromEPSG(4326)
	if err != nil {
		t.Fatal(err)
	}
	defer wgs.Close()
	b, err := dem.Bounds(wgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tr.Tiles {
		if s.BBox[0] < b[0] || s.BBox[1] < b[1] || s.BBox[2] > b[2] || s.BBox[3] > b[3] {
			t.Errorf("DEM %v does not cover scene %v", b, s.BBox)
		}
	}

	one := Options{Out: t.TempDir(), Seed: 5, Fields: 6, Tiles: 1, Start: o.Start, End: o.Start}
	tr1, err := Generate(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	if tr1.Fields[0].ID != "SYN-001" || len(tr1.Tiles) != 0 || tr1.Scene.OriginX != tr.Tiles[0].OriginX {
		t.Errorf("one tile: first talhão %s, %d tiles, corner %.0f; want SYN-001, 0, %.0f", tr1.Fields[0].ID, len(tr1.Tiles), tr1.Scene.OriginX, tr.Tiles[0].OriginX)
	}
	_, err = Generate(context.Background(), Options{Out: t.TempDir(), Tiles: 36, SceneSizePx: 2048, Fields: 36})
	if !errors.Is(err, ErrOptions) {
		t.Errorf("36 scenes of 2,048 px: %v, want ErrOptions", err)
	}
}
