package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"

	"github.com/airbusgeo/godal"
)

// The Sentinel-2 tiling grid (Options.Tiles): a tile is an MGRS 100 km
// square of its UTM zone, its images start at the square's north-west
// corner on the 60 m grid (13TDE: 399960 E, 4500000 N on Earth Search)
// and run 109.8 km east and south.
const (
	s2SquareM = 100_000.0
	s2TileM   = 109_800.0
	s2SnapM   = 60.0
)

// TileDir is the folder of scene k (0-based) of a mosaic, below Out.
func TileDir(k int) string { return fmt.Sprintf("tile-%02d", k+1) }

// gridOrigin is the north-west corner (UTM metres) of scene o.tile of a
// mosaic of o.Tiles on the Sentinel-2 grid around the point (cx, cy):
// squares of the scene's side from the corner of the Sentinel-2 tile
// holding that point, the first the square holding it (moved west or north
// as far as the mosaic needs to fit in the tile), in ⌈√Tiles⌉ columns.
func gridOrigin(o Options, cx, cy float64) (x0, y0 float64, err error) {
	side := float64(o.SceneSizePx) * pixelM
	cols := int(math.Ceil(math.Sqrt(float64(o.Tiles))))
	rows := (o.Tiles + cols - 1) / cols
	fit := int(s2TileM / side)
	if cols > fit || rows > fit {
		return 0, 0, fmt.Errorf("%w: %d scenes of %d px (%d × %d) do not fit in one Sentinel-2 tile (%d × %d)", ErrOptions, o.Tiles, o.SceneSizePx, cols, rows, fit, fit)
	}
	ulx := math.Floor(math.Floor(cx/s2SquareM)*s2SquareM/s2SnapM) * s2SnapM
	uly := math.Round((math.Floor(cy/s2SquareM)+1)*s2SquareM/s2SnapM) * s2SnapM
	i0 := max(0, min(int(math.Floor((cx-ulx)/side)), fit-cols))
	j0 := max(0, min(int(math.Floor((uly-cy)/side)), fit-rows))
	return ulx + float64(i0+o.tile%cols)*side, uly - float64(j0+o.tile/cols)*side, nil
}

// generateMosaic writes o.Tiles scenes, each a full archive in its
// TileDir (seed Seed + 1000 k, an even share of Fields), and joins them at
// the top of o.Out: one catalog (asset hrefs into the scenes' folders),
// talhões, sowing and truth file, and a DEM over all (a COG of the scenes'
// DEMs).
func generateMosaic(ctx context.Context, o Options) (Truth, error) {
	if o.Fields < o.Tiles {
		return Truth{}, fmt.Errorf("%w: %d talhões for %d tiles", ErrOptions, o.Fields, o.Tiles)
	}
	var all Truth
	cat := stacCollection{Type: "FeatureCollection", Features: []stacItem{}, Links: []stacLink{}}
	fc := geoFC{Type: "FeatureCollection", Name: "talhoes"}
	sowing := bytes.NewBufferString("field_id,season,sowing_date,crop\n")
	var dems []string
	for k := range o.Tiles {
		to := o
		to.tile, to.Seed = k, o.Seed+1000*int64(k)
		to.Out = filepath.Join(o.Out, TileDir(k))
		to.Fields = o.Fields / o.Tiles
		if k < o.Fields%o.Tiles {
			to.Fields++
		}
		if err := os.MkdirAll(to.Out, 0o755); err != nil {
			return Truth{}, fmt.Errorf("create %s: %w", to.Out, err)
		}
		tr, err := generateScene(ctx, to)
		if err != nil {
			return Truth{}, fmt.Errorf("tile %d: %w", k+1, err)
		}
		if k == 0 {
			all = tr
			all.Items, all.Fields = nil, nil
		}
		all.Tiles = append(all.Tiles, tr.Scene)
		all.Items = append(all.Items, tr.Items...)
		all.Fields = append(all.Fields, tr.Fields...)
		if err := joinTile(to.Out, TileDir(k), &cat, &fc, sowing); err != nil {
			return Truth{}, err
		}
		dems = append(dems, filepath.Join(to.Out, DEMFile))
	}
	cat.Context = stacContext{Returned: len(cat.Features), Matched: len(cat.Features)}
	if err := writeJSON(filepath.Join(o.Out, CatalogFile), cat); err != nil {
		return Truth{}, err
	}
	if err := writeJSON(filepath.Join(o.Out, FieldsFile), fc); err != nil {
		return Truth{}, err
	}
	if err := os.WriteFile(filepath.Join(o.Out, SowingFile), sowing.Bytes(), 0o644); err != nil {
		return Truth{}, fmt.Errorf("write %s: %w", SowingFile, err)
	}
	if err := mosaicDEM(filepath.Join(o.Out, DEMFile), dems); err != nil {
		return Truth{}, err
	}
	if err := writeJSON(filepath.Join(o.Out, TruthFile), all); err != nil {
		return Truth{}, err
	}
	return all, nil
}

// joinTile appends the catalog items (asset hrefs below rel), talhões and
// sowing rows of the scene archive in dir.
func joinTile(dir, rel string, cat *stacCollection, fc *geoFC, sowing *bytes.Buffer) error {
	var c stacCollection
	if err := readJSON(filepath.Join(dir, CatalogFile), &c); err != nil {
		return err
	}
	for _, it := range c.Features {
		for k, a := range it.Assets {
			a.Href = path.Join(rel, a.Href)
			it.Assets[k] = a
		}
		cat.Features = append(cat.Features, it)
	}
	var f geoFC
	if err := readJSON(filepath.Join(dir, FieldsFile), &f); err != nil {
		return err
	}
	fc.Features = append(fc.Features, f.Features...)
	raw, err := os.ReadFile(filepath.Join(dir, SowingFile))
	if err != nil {
		return fmt.Errorf("read %s: %w", SowingFile, err)
	}
	if _, rows, ok := bytes.Cut(raw, []byte("\n")); ok {
		sowing.Write(rows)
	}
	return nil
}

func readJSON(name string, v any) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	return nil
}

// mosaicDEM writes one COG over the DEMs of the scenes (same CRS and
// resolution, side by side).
func mosaicDEM(dst string, dems []string) error {
	vrt, err := godal.BuildVRT(dst+".vrt", dems, nil)
	if err != nil {
		return fmt.Errorf("DEM mosaic: %w", err)
	}
	defer os.Remove(dst + ".vrt")
	defer vrt.Close()
	out, err := vrt.Translate(dst, []string{"-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=3", "-co", "BLOCKSIZE=256"})
	if err != nil {
		return fmt.Errorf("DEM mosaic %s: %w", dst, err)
	}
	return out.Close()
}
