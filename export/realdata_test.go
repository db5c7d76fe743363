package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"
	"github.com/paulmach/orb/planar"
)

// TestRealCellsGeoParquet grids the demo talhões near Sinop (MT) with the
// real grid package and checks the GeoParquet file as arrow-go reads it.
func TestRealCellsGeoParquet(t *testing.T) {
	src := filepath.Join("..", "testdata", "demo", "talhoes.geojson")
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("demo talhões missing (they are part of the repository): %v", err)
	}
	fields, errs := grid.Read(context.Background(), src, grid.ReadOptions{})
	if len(fields) == 0 {
		t.Fatalf("grid.Read(%s): no field (%v)", src, errs)
	}
	var grids []grid.Grid
	total := 0
	for _, f := range fields {
		g, err := grid.Build(f, grid.Options{})
		if err != nil {
			t.Logf("talhão %s not gridded: %v", f.ID, err) // the demo has bad talhões on purpose
			continue
		}
		grids = append(grids, g)
		total += len(g.Cells)
	}
	if len(grids) < 2 {
		t.Fatalf("only %d demo talhões gridded", len(grids))
	}
	var buf bytes.Buffer
	if err := export.WriteCellsParquet(&buf, grids, export.Options{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	af := readArrow(t, buf.Bytes())
	if len(af.rows) != total {
		t.Fatalf("arrow read %d cells, grids have %d", len(af.rows), total)
	}
	var geo struct {
		Columns map[string]struct {
			GeometryTypes []string  `json:"geometry_types"`
			BBox          []float64 `json:"bbox"`
		} `json:"columns"`
	}
	if err := json.Unmarshal([]byte(af.kv["geo"]), &geo); err != nil {
		t.Fatal(err)
	}
	var all orb.Bound
	for i, g := range grids {
		if i == 0 {
			all = g.Field.Geometry.Bound()
		} else {
			all = all.Union(g.Field.Geometry.Bound())
		}
	}
	gb := geo.Columns["geometry"].BBox
	if gb[0] < all.Min[0]-1e-9 || gb[1] < all.Min[1]-1e-9 || gb[2] > all.Max[0]+1e-9 || gb[3] > all.Max[1]+1e-9 {
		t.Errorf("geo bbox %v outside the talhões' extent %v", gb, all)
	}
	byField := map[string]grid.Grid{}
	for _, g := range grids {
		byField[g.Field.ID] = g
	}
	areas := map[string]float64{}
	for i, r := range af.rows {
		var g []byte
		json.Unmarshal([]byte(`"`+r["geometry"].(string)+`"`), &g)
		geom, err := wkb.Unmarshal(g)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		poly, ok := geom.(orb.Polygon)
		if !ok {
			t.Fatalf("row %d: %T, want Polygon", i, geom)
		}
		id := r["field_id"].(string)
		c := orb.Point{r["centre_lon"].(float64), r["centre_lat"].(float64)}
		if !planar.MultiPolygonContains(byField[id].Field.Geometry, c) {
			t.Errorf("row %d (%s %s): centre %v outside the talhão", i, id, r["cell_id"], c)
		}
		if !poly.Bound().Contains(c) {
			t.Errorf("row %d: centre %v outside its cell", i, c)
		}
		areas[id] += r["cell_area_ha"].(float64)
	}
	for id, a := range areas {
		if fa := byField[id].AreaHa; a > fa*1.0001 || a < fa*0.5 {
			t.Errorf("talhão %s: cells cover %.2f ha of %.2f ha", id, a, fa)
		}
	}
}

// TestRealNDVISeries writes the 204 real MOD13Q1 NDVI values of the sits
// point near Sinop (2000–2017) and reads them back with arrow-go exactly.
func TestRealNDVISeries(t *testing.T) {
	p := filepath.Join("..", "testdata", "realdata", "sits-mt-labelled-timeseries", "point_mt_6bands_series.csv")
	recs := testkit.ReadCSV(t, p)
	var rows []export.ObsRow
	for _, r := range recs[1:] {
		day, err := zarc.ParseDate(r[1])
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseFloat(r[7], 32)
		if err != nil {
			t.Fatal(err)
		}
		ndvi := float32(v)
		rows = append(rows, export.ObsRow{FieldID: "sits-point-1", CellID: "r000c000", Date: day, Collection: "modis-13Q1-061",
			ItemID: "MOD13Q1.A" + r[1], NDVI: &ndvi})
	}
	if len(rows) != 204 {
		t.Fatalf("%d observations, README says 204", len(rows))
	}
	var buf bytes.Buffer
	if err := export.Write(&buf, rows, export.Options{}); err != nil {
		t.Fatal(err)
	}
	af := readArrow(t, buf.Bytes())
	if af.rows[0]["date"] != "2000-09-13" || af.rows[203]["date"] != "2017-08-29" {
		t.Errorf("first/last dates %v %v, README: 2000-09-13 .. 2017-08-29", af.rows[0]["date"], af.rows[203]["date"])
	}
	for i, r := range af.rows {
		want, _ := strconv.ParseFloat(recs[i+1][7], 64)
		if got := r["ndvi"].(float64); got != want { // float32 shortest form, through JSON, equals the CSV text
			t.Errorf("row %d (%s): ndvi %v, want %v", i, r["date"], got, want)
		}
		if r["ndti"] != nil {
			t.Errorf("row %d: ndti %v, want null (MODIS 13Q1 has no SWIR1)", i, r["ndti"])
		}
	}
	t.Logf("204 real observations: %d bytes (%.1f bytes/row)", buf.Len(), float64(buf.Len())/204)
}
