package slope

import (
	"context"
	"testing"
)

// TestOpenMosaic: four 1″ tiles opened with OpenMosaic (the in-memory VRT
// of --dem stac:<collection>) give, for 40 talhões of which many straddle
// tile edges, exactly the slopes of the same tiles mosaicked as a VRT file
// (the way an operator's --dem mosaic.vrt is read); no tile and a cancelled
// context are errors.
func TestOpenMosaic(t *testing.T) {
	const lon0, lat0, tile = -48.0, -15.0, 0.05
	dir := t.TempDir()
	vrt := mosaic(t, dir, lon0, lat0, tile) // writes tile_i_j.tif and mosaic.vrt
	var tiles []string
	for _, name := range []string{"tile_0_0.tif", "tile_0_1.tif", "tile_1_0.tif", "tile_1_1.tif"} {
		tiles = append(tiles, dir+"/"+name)
	}
	m, err := OpenMosaic(context.Background(), "stac:test-dem", tiles)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	w, err := Open(context.Background(), vrt)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if m.Source() != "stac:test-dem" {
		t.Errorf("Source %q", m.Source())
	}
	fields := randomFields(40, lon0, lat0, 2*tile)
	for _, f := range fields {
		a, errA := m.Field(context.Background(), f)
		b, errB := w.Field(context.Background(), f)
		if errA != nil || errB != nil {
			t.Fatalf("%s: mosaic %v, whole %v", f.ID, errA, errB)
		}
		if a.NPixels == 0 || a.NVoid == a.NPixels {
			t.Errorf("%s: no valid pixel (%+v)", f.ID, a.Stats)
		}
		if a.MeanPct != b.MeanPct || a.NPixels != b.NPixels || a.NVoid != b.NVoid || a.DeclividadeMedia != b.DeclividadeMedia {
			t.Errorf("%s: OpenMosaic %.12f %% (%d px), VRT file %.12f %% (%d px)", f.ID, a.MeanPct, a.NPixels, b.MeanPct, b.NPixels)
		}
	}
	if _, err := OpenMosaic(context.Background(), "stac:none", nil); err == nil {
		t.Error("OpenMosaic with no tile: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := OpenMosaic(ctx, "stac:x", tiles); err == nil {
		t.Error("OpenMosaic with a cancelled context: no error")
	}
}
