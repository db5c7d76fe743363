package series

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/grid"
	"github.com/paulmach/orb"
)

const eps = 1e-5

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= eps
}

// raster describes a tiny GeoTIFF for a test.
type raster struct {
	srs        string // "EPSG:32721" or WKT / proj4
	originX    float64
	originY    float64
	res        float64
	w, h       int
	dtype      godal.DataType
	background float64
	nodata     *float64
	set        map[[2]int]float64 // (col,row) → DN
}

// writeTIF writes r as a tiled DEFLATE GeoTIFF at path.
func writeTIF(t testing.TB, path string, r raster) {
	t.Helper()
	registerGDAL()
	ds, err := godal.Create(godal.GTiff, path, 1, r.dtype, r.w, r.h,
		godal.CreationOption("TILED=YES", "BLOCKXSIZE=16", "BLOCKYSIZE=16", "COMPRESS=DEFLATE"))
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	if r.srs != "" {
		sr, err := godal.NewSpatialRef(r.srs)
		if err != nil {
			t.Fatalf("srs %s: %v", r.srs, err)
		}
		if err := ds.SetSpatialRef(sr); err != nil {
			t.Fatal(err)
		}
		sr.Close()
		if err := ds.SetGeoTransform([6]float64{r.originX, r.res, 0, r.originY, 0, -r.res}); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]float64, r.w*r.h)
	for i := range buf {
		buf[i] = r.background
	}
	for k, v := range r.set {
		buf[k[1]*r.w+k[0]] = v
	}
	b := ds.Bands()[0]
	if r.nodata != nil {
		if err := b.SetNoData(*r.nodata); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Write(0, 0, buf, r.w, r.h); err != nil {
		t.Fatal(err)
	}
	if err := ds.Close(); err != nil {
		t.Fatalf("close %s: %v", path, err)
	}
}

// toLonLat converts a point of srs to lon/lat.
func toLonLat(t testing.TB, srs string, x, y float64) orb.Point {
	t.Helper()
	registerGDAL()
	src, err := godal.NewSpatialRef(srs)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := godal.NewSpatialRefFromEPSG(4326)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	tr, err := godal.NewTransform(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	xs, ys := []float64{x}, []float64{y}
	if err := tr.TransformEx(xs, ys, nil, nil); err != nil {
		t.Fatal(err)
	}
	return orb.Point{xs[0], ys[0]}
}

// writeJSON marshals v into path.
func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// item builds a STAC item map with a bbox around the points.
func item(id, collection, datetime string, props map[string]any, bbox orb.Bound, assets map[string]any) map[string]any {
	p := map[string]any{"datetime": datetime}
	for k, v := range props {
		p[k] = v
	}
	return map[string]any{
		"type": "Feature", "stac_version": "1.0.0", "id": id, "collection": collection,
		"bbox":       []float64{bbox.Min[0], bbox.Min[1], bbox.Max[0], bbox.Max[1]},
		"geometry":   map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{bbox.Min[0], bbox.Min[1]}, {bbox.Max[0], bbox.Min[1]}, {bbox.Max[0], bbox.Max[1]}, {bbox.Min[0], bbox.Max[1]}, {bbox.Min[0], bbox.Min[1]}}}},
		"properties": p,
		"assets":     assets,
	}
}

func collection(items ...map[string]any) map[string]any {
	return map[string]any{"type": "FeatureCollection", "features": items}
}

// fieldAround returns a talhão (square of half-side d degrees) around the
// points, with one cell per point.
func fieldAround(id string, d float64, pts ...orb.Point) grid.Grid {
	b := orb.MultiPoint(pts).Bound().Pad(d)
	poly := orb.Polygon{orb.Ring{b.Min, {b.Max[0], b.Min[1]}, b.Max, {b.Min[0], b.Max[1]}, b.Min}}
	g := grid.Grid{Field: grid.Field{ID: id, Geometry: orb.MultiPolygon{poly}}, EPSG: 32721}
	for i, p := range pts {
		g.Cells = append(g.Cells, grid.Cell{FieldID: id, ID: cellID(i), Centre: p, MODIS: true})
	}
	g.MODISEligible = true
	return g
}

func cellID(i int) string { return string(rune('a' + i)) }

// sampleDir loads the catalog at path and samples grids.
func sampleDir(t testing.TB, path string, grids []grid.Grid, o Options) ([]Obs, Stats) {
	t.Helper()
	return sampleDirAllow(t, path, nil, grids, o)
}

// sampleDirAllow is sampleDir with allowed href prefixes.
func sampleDirAllow(t testing.TB, path string, allow []string, grids []grid.Grid, o Options) ([]Obs, Stats) {
	t.Helper()
	cat, errs := LoadCatalog(context.Background(), path, CatalogOptions{AllowHrefPrefixes: allow})
	for _, e := range errs {
		t.Logf("catalog: %v", e)
	}
	if cat == nil {
		t.Fatalf("LoadCatalog(%s) = nil", path)
	}
	obs, st, err := Sample(context.Background(), cat, grids, o)
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	return obs, st
}

func rel(t testing.TB, dir, p string) string {
	r, err := filepath.Rel(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustTime(s string) time.Time {
	t, err := parseTime(s)
	if err != nil {
		panic(err)
	}
	return t
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
