package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/apache/arrow-go/v18/arrow/memory"
	aparquet "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/export/exporttest"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"
)

// arrowFile is a Parquet file as Apache Arrow's independent Go
// implementation reads it.
type arrowFile struct {
	cols      map[string]*schema.Column // leaf columns by dotted path
	rows      []map[string]any          // values as JSON (dates as YYYY-MM-DD)
	kv        map[string]string
	createdBy string
	rowGroups []int64
	codecs    []string
}

func readArrow(t *testing.T, b []byte) arrowFile {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("arrow: open: %v", err)
	}
	defer rdr.Close()
	md := rdr.MetaData()
	af := arrowFile{cols: map[string]*schema.Column{}, kv: map[string]string{}, createdBy: md.GetCreatedBy()}
	for i := 0; i < md.Schema.NumColumns(); i++ {
		c := md.Schema.Column(i)
		af.cols[c.ColumnPath().String()] = c
	}
	for _, k := range md.KeyValueMetadata().Keys() {
		af.kv[k] = *md.KeyValueMetadata().FindValue(k)
	}
	for i := 0; i < md.NumRowGroups(); i++ {
		rg := md.RowGroup(i)
		af.rowGroups = append(af.rowGroups, rg.NumRows())
		for j := 0; j < rg.NumColumns(); j++ {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				t.Fatal(err)
			}
			af.codecs = append(af.codecs, cc.Compression().String())
		}
	}
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(b), aparquet.NewReaderProperties(memory.DefaultAllocator),
		pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("arrow: read table: %v", err)
	}
	defer tbl.Release()
	n := int(tbl.NumRows())
	af.rows = make([]map[string]any, n)
	for i := range af.rows {
		af.rows[i] = map[string]any{}
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		col := tbl.Column(c)
		i := 0
		for _, chunk := range col.Data().Chunks() {
			for j := 0; j < chunk.Len(); j++ {
				af.rows[i][col.Name()] = jsonValue(t, chunk.GetOneForMarshal(j))
				i++
			}
		}
	}
	return af
}

// jsonValue normalises a value through JSON so that both sides compare
// alike (float32 keeps its shortest float32 form).
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// expectRows renders Go rows the way readArrow renders the file: one map
// per row keyed by the parquet column name, dates as strings, nil pointers
// as null, BBox as a struct of its parquet names.
func expectRows[T export.Row](t *testing.T, rows []T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range rows {
		v := reflect.ValueOf(r)
		m := map[string]any{}
		for i := 0; i < v.NumField(); i++ {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("parquet"), ",")
			f := v.Field(i)
			var x any
			switch {
			case f.Kind() == reflect.Pointer && f.IsNil():
				x = nil
			case f.Type() == reflect.TypeFor[zarc.Date]():
				x = f.Interface().(zarc.Date).String()
			case f.Type() == reflect.TypeFor[*zarc.Date]():
				x = f.Interface().(*zarc.Date).String()
			case f.Type() == reflect.TypeFor[export.BBox]():
				b := f.Interface().(export.BBox)
				x = map[string]any{"xmin": b.Xmin, "ymin": b.Ymin, "xmax": b.Xmax, "ymax": b.Ymax}
			case f.Kind() == reflect.Pointer:
				x = f.Elem().Interface()
			case f.Kind() == reflect.Slice && f.IsNil() && f.Type().Elem().Kind() == reflect.String:
				x = []string{} // required lists: nil is an empty list
			default:
				x = f.Interface()
			}
			m[name] = jsonValue(t, x)
		}
		out = append(out, m)
	}
	return out
}

// wantTypes lists, per dataset, the physical and logical type of every
// leaf column and whether it is optional.
var wantTypes = map[string]map[string]string{
	"cells": {
		"field_id": "BYTE_ARRAY/String", "cell_id": "BYTE_ARRAY/String", "row": "INT32/Int(bitWidth=32, isSigned=true)", "col": "INT32/Int(bitWidth=32, isSigned=true)",
		"geometry": "BYTE_ARRAY/None", "bbox.xmin": "DOUBLE/None", "bbox.ymin": "DOUBLE/None", "bbox.xmax": "DOUBLE/None", "bbox.ymax": "DOUBLE/None",
		"centre_lon": "DOUBLE/None", "centre_lat": "DOUBLE/None", "cell_area_ha": "DOUBLE/None",
		"border": "BOOLEAN/None", "fallback": "BOOLEAN/None", "modis": "BOOLEAN/None",
	},
	"observations": {
		"field_id": "BYTE_ARRAY/String", "cell_id": "BYTE_ARRAY/String", "date": "INT32/Date", "collection": "BYTE_ARRAY/String",
		"item_id": "BYTE_ARRAY/String", "ndvi": "FLOAT/None?", "ndti": "FLOAT/None?", "mask_reason": "BYTE_ARRAY/String?",
		"red": "FLOAT/None?", "nir": "FLOAT/None?", "swir16": "FLOAT/None?", "swir22": "FLOAT/None?",
		"green_pct": "FLOAT/None?", "straw_pct": "FLOAT/None?", "soil_pct": "FLOAT/None?",
	},
	"events": {
		"field_id": "BYTE_ARRAY/String", "date": "INT32/Date", "before": "INT32/Date", "after": "INT32/Date", "cell_fraction": "DOUBLE/None",
		"n_cells": "INT32/Int(bitWidth=32, isSigned=true)", "magnitude_sigma": "FLOAT/None", "operation": "BYTE_ARRAY/String?",
		"test": "BYTE_ARRAY/String", "n_interior": "INT32/Int(bitWidth=32, isSigned=true)", "ndti_drop": "FLOAT/None?", "ndti_noise": "FLOAT/None?",
		"dates_before": "INT32/Int(bitWidth=32, isSigned=true)", "dates_after": "INT32/Int(bitWidth=32, isSigned=true)", "sensors.list.element": "BYTE_ARRAY/String",
	},
	"seasons": {
		"field_id": "BYTE_ARRAY/String", "season": "BYTE_ARRAY/String", "crop": "BYTE_ARRAY/String", "sowing_date": "INT32/Date?",
		"sowing_source": "BYTE_ARRAY/String?", "sowing_confidence": "FLOAT/None?", "decendio": "INT32/Int(bitWidth=32, isSigned=true)?",
		"window_start": "INT32/Date?", "window_end": "INT32/Date?", "cover_date": "INT32/Date?", "cover_pct": "DOUBLE/None?",
		"n_cells": "INT32/Int(bitWidth=32, isSigned=true)", "n_obs": "INT32/Int(bitWidth=32, isSigned=true)", "reason": "BYTE_ARRAY/String?",
		"straw_prior": "BYTE_ARRAY/String?",
	},
	"cell_cover": {
		"field_id": "BYTE_ARRAY/String", "cell_id": "BYTE_ARRAY/String", "season": "BYTE_ARRAY/String", "cover_pct": "DOUBLE/None?",
		"n_obs": "INT32/Int(bitWidth=32, isSigned=true)",
	},
	"cycles": {
		"field_id": "BYTE_ARRAY/String", "season": "BYTE_ARRAY/String", "cycle": "INT32/Int(bitWidth=32, isSigned=true)", "kind": "BYTE_ARRAY/String", "crop": "BYTE_ARRAY/String?",
		"start_date": "INT32/Date", "end_date": "INT32/Date", "sowing_date": "INT32/Date?", "peak_ndvi": "FLOAT/None?",
	},
	"indicators": {
		"field_id": "BYTE_ARRAY/String", "crop": "BYTE_ARRAY/String", "area_ha": "DOUBLE/None", "cell_size_ha": "DOUBLE/None",
		"n_cells": "INT32/Int(bitWidth=32, isSigned=true)", "sensors.list.element": "BYTE_ARRAY/String", "modis_eligible": "BOOLEAN/None",
		"period_start": "INT32/Date?", "period_end": "INT32/Date?", "t_years": "DOUBLE/None?", "t_years_min": "DOUBLE/None?", "t_censored": "BOOLEAN/None",
		"t_level": "INT32/Int(bitWidth=32, isSigned=true)?", "last_event": "INT32/Date?", "c_pct": "DOUBLE/None?", "c_level": "INT32/Int(bitWidth=32, isSigned=true)?", "c_pct_lo": "DOUBLE/None?", "c_pct_hi": "DOUBLE/None?", "c_level_uncertain": "BOOLEAN/None?",
		"c_seasons.list.element": "BYTE_ARRAY/String", "c_season_1_pct": "DOUBLE/None?", "c_season_2_pct": "DOUBLE/None?", "c_season_3_pct": "DOUBLE/None?",
		"slope_mean_pct": "DOUBLE/None?", "slope_median_pct": "DOUBLE/None?", "slope_p90_pct": "DOUBLE/None?", "contour_required": "BOOLEAN/None?",
		"declividade_media": "INT32/Int(bitWidth=32, isSigned=true)?", "status": "BYTE_ARRAY/String", "reasons.list.element": "BYTE_ARRAY/String",
	},
}

func columnTypes(af arrowFile) map[string]string {
	got := map[string]string{}
	for path, c := range af.cols {
		s := c.PhysicalType().String() + "/" + c.LogicalType().String()
		// optional leaves outside lists have definition level 1
		if c.MaxDefinitionLevel() == 1 && !strings.Contains(path, ".list.") {
			s += "?"
		}
		got[path] = s
	}
	return got
}

// checkDataset writes rows, reads them back with arrow-go and checks column
// types, values, sort order, metadata and zstd.
func checkDataset[T export.Row](t *testing.T, rows []T) arrowFile {
	t.Helper()
	ds := export.DatasetOf[T]()
	want := export.Sorted(rows)
	var buf bytes.Buffer
	if err := export.Write(&buf, slices.Clone(rows), export.Options{Version: "v1.2.3"}); err != nil {
		t.Fatalf("Write(%s): %v", ds.Name, err)
	}
	af := readArrow(t, buf.Bytes())
	if got := columnTypes(af); !reflect.DeepEqual(got, wantTypes[ds.Name]) {
		for k, v := range wantTypes[ds.Name] {
			if got[k] != v {
				t.Errorf("%s column %s: type %q, want %q", ds.Name, k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := wantTypes[ds.Name][k]; !ok {
				t.Errorf("%s: unexpected column %s %s", ds.Name, k, got[k])
			}
		}
	}
	exp := expectRows(t, want)
	if len(af.rows) != len(exp) {
		t.Fatalf("%s: arrow read %d rows, want %d", ds.Name, len(af.rows), len(exp))
	}
	for i := range exp {
		if !reflect.DeepEqual(af.rows[i], exp[i]) {
			t.Errorf("%s row %d:\n got %v\nwant %v", ds.Name, i, af.rows[i], exp[i])
		}
	}
	if af.createdBy != "manejo version v1.2.3" {
		t.Errorf("%s: created_by %q, want manejo version v1.2.3", ds.Name, af.createdBy)
	}
	if af.kv["manejo:dataset"] != ds.Name {
		t.Errorf("%s: manejo:dataset metadata %q", ds.Name, af.kv["manejo:dataset"])
	}
	for _, c := range af.codecs {
		if c != "ZSTD" {
			t.Errorf("%s: column chunk compressed with %s, want ZSTD", ds.Name, c)
		}
	}
	// And back through our own reader.
	back, err := export.Read[T](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatalf("Read(%s): %v", ds.Name, err)
	}
	if got := expectRows(t, back); !reflect.DeepEqual(got, exp) {
		t.Errorf("Read(%s) round trip differs:\n got %v\nwant %v", ds.Name, got, exp)
	}
	return af
}

func TestDatasetsReadByArrow(t *testing.T) {
	fx := exporttest.New(t)
	t.Run("cells", func(t *testing.T) { checkDataset(t, fx.Cells) })
	t.Run("observations", func(t *testing.T) {
		af := checkDataset(t, fx.Obs)
		// Spot values as arrow decodes them, independent of expectRows.
		r := af.rows[0] // MT-SIN-001 sorts first
		if r["field_id"] != "MT-SIN-001" || r["date"] != "2025-10-02" || r["ndvi"] != 0.5 || r["mask_reason"] != nil {
			t.Errorf("first observation = %v", r)
		}
		masked := af.rows[1] // MT-SIN-002 r000c000 2025-09-12 landsat (collection sorts before sentinel)
		if masked["collection"] != "landsat-c2-l2" || masked["ndvi"] != nil || masked["ndti"] != nil || masked["mask_reason"] != "cloud" {
			t.Errorf("masked observation = %v", masked)
		}
	})
	t.Run("events", func(t *testing.T) {
		af := checkDataset(t, fx.Events)
		if af.rows[0]["date"] != "2023-08-03" || af.rows[1]["operation"] != "gradagem" || af.rows[0]["operation"] != nil {
			t.Errorf("events = %v", af.rows)
		}
		// The evidence of issue 30 as arrow decodes it.
		if r := af.rows[1]; r["test"] != "ndti-step" || r["dates_before"] != 5.0 || r["ndti_noise"] != 0.0125 || af.rows[0]["ndti_drop"] != nil {
			t.Errorf("event evidence = %v", af.rows)
		}
	})
	t.Run("seasons", func(t *testing.T) { checkDataset(t, fx.Seasons) })
	t.Run("cell_cover", func(t *testing.T) {
		cover := 41.5
		checkDataset(t, []export.CellCoverRow{
			{FieldID: "MT-SIN-002", CellID: "r000c001", Season: "2024/25", CoverPct: &cover, NObs: 3},
			{FieldID: "MT-SIN-002", CellID: "r000c000", Season: "2024/25", NObs: 0},
		})
	})
	t.Run("cycles", func(t *testing.T) { checkDataset(t, fx.Cycles) })
	t.Run("indicators", func(t *testing.T) {
		af := checkDataset(t, fx.Indicators)
		r := af.rows[1] // MT-SIN-002
		if r["t_level"] != 1.0 || r["c_pct"] != 79.45 || r["c_season_3_pct"] != nil || r["declividade_media"] != 4.0 ||
			r["contour_required"] != true || r["last_event"] != "2025-09-22" {
			t.Errorf("indicators MT-SIN-002 = %v", r)
		}
		if got := fmt.Sprint(r["sensors"]); got != "[landsat-c2-l2 sentinel-2-l2a]" {
			t.Errorf("sensors = %s", got)
		}
	})
}

func TestGeoParquetMetadata(t *testing.T) {
	fx := exporttest.New(t)
	var buf bytes.Buffer
	if err := export.Write(&buf, slices.Clone(fx.Cells), export.Options{}); err != nil {
		t.Fatal(err)
	}
	af := readArrow(t, buf.Bytes())
	raw, ok := af.kv["geo"]
	if !ok {
		t.Fatal("no geo key in the footer metadata")
	}
	var geo struct {
		Version       string `json:"version"`
		PrimaryColumn string `json:"primary_column"`
		Columns       map[string]struct {
			Encoding      string                         `json:"encoding"`
			GeometryTypes []string                       `json:"geometry_types"`
			BBox          []float64                      `json:"bbox"`
			CRS           json.RawMessage                `json:"crs"`
			Covering      map[string]map[string][]string `json:"covering"`
		} `json:"columns"`
	}
	if err := json.Unmarshal([]byte(raw), &geo); err != nil {
		t.Fatalf("geo metadata is not JSON: %v\n%s", err, raw)
	}
	if geo.Version != "1.1.0" || geo.PrimaryColumn != "geometry" {
		t.Errorf("geo version/primary = %q/%q", geo.Version, geo.PrimaryColumn)
	}
	col, ok := geo.Columns["geometry"]
	if !ok {
		t.Fatalf("geo columns = %v", geo.Columns)
	}
	if col.Encoding != "WKB" || !slices.Equal(col.GeometryTypes, []string{"Polygon"}) || col.CRS != nil {
		t.Errorf("geometry column = %+v (want WKB, [Polygon], crs omitted = OGC:CRS84)", col)
	}
	wantBBox := []float64{-55.655, -11.781, -55.602, -11.762}
	for i := range wantBBox {
		if !testkit.Near(col.BBox[i], wantBBox[i], 1e-12) {
			t.Errorf("bbox[%d] = %v, want %v", i, col.BBox[i], wantBBox[i])
		}
	}
	wantCov := map[string][]string{"xmin": {"bbox", "xmin"}, "ymin": {"bbox", "ymin"}, "xmax": {"bbox", "xmax"}, "ymax": {"bbox", "ymax"}}
	if !reflect.DeepEqual(col.Covering["bbox"], wantCov) {
		t.Errorf("covering = %v", col.Covering)
	}
	// The WKB that arrow reads decodes to the input polygon, and the covering
	// column holds its bounds.
	for i, r := range af.rows {
		var g []byte
		s, _ := r["geometry"].(string)
		if err := json.Unmarshal([]byte(`"`+s+`"`), &g); err != nil {
			t.Fatal(err)
		}
		geom, err := wkb.Unmarshal(g)
		if err != nil {
			t.Fatalf("row %d: WKB read by arrow does not decode: %v", i, err)
		}
		p, ok := geom.(orb.Polygon)
		if !ok || len(p) != 1 || len(p[0]) != 5 {
			t.Fatalf("row %d: geometry %T %v", i, geom, geom)
		}
		bb := r["bbox"].(map[string]any)
		b := p.Bound()
		if bb["xmin"] != b.Min[0] || bb["ymax"] != b.Max[1] {
			t.Errorf("row %d: bbox %v, polygon bound %v", i, bb, b)
		}
		if cx, cy := r["centre_lon"].(float64), r["centre_lat"].(float64); !p.Bound().Contains(orb.Point{cx, cy}) {
			t.Errorf("row %d: centre (%v,%v) outside its cell", i, cx, cy)
		}
	}
}

func TestDeterministicBytes(t *testing.T) {
	fx := exporttest.New(t)
	write := func(t *testing.T, shuffle int) map[string][]byte {
		out := map[string][]byte{}
		rng := rand.New(rand.NewPCG(uint64(shuffle), 7))
		sh := func(n int, swap func(i, j int)) {
			if shuffle > 0 {
				rng.Shuffle(n, swap)
			}
		}
		var b bytes.Buffer
		do := func(name string, err error) {
			if err != nil {
				t.Fatal(err)
			}
			out[name] = slices.Clone(b.Bytes())
			b.Reset()
		}
		cells, obs, ev, se, cy, in := slices.Clone(fx.Cells), slices.Clone(fx.Obs), slices.Clone(fx.Events), slices.Clone(fx.Seasons), slices.Clone(fx.Cycles), slices.Clone(fx.Indicators)
		for i := range cells {
			cells[i].BBox = export.BBox{} // let the writer fill it from the WKB
		}
		sh(len(cells), func(i, j int) { cells[i], cells[j] = cells[j], cells[i] })
		sh(len(obs), func(i, j int) { obs[i], obs[j] = obs[j], obs[i] })
		sh(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		do("cells", export.Write(&b, cells, export.Options{Version: "v1"}))
		do("observations", export.Write(&b, obs, export.Options{Version: "v1"}))
		do("events", export.Write(&b, ev, export.Options{Version: "v1"}))
		do("seasons", export.Write(&b, se, export.Options{Version: "v1"}))
		do("cycles", export.Write(&b, cy, export.Options{Version: "v1"}))
		do("indicators", export.Write(&b, in, export.Options{Version: "v1"}))
		return out
	}
	first := write(t, 0)
	for _, run := range []int{0, 1, 2} {
		again := write(t, run)
		for name, b := range first {
			if !bytes.Equal(b, again[name]) {
				t.Errorf("%s: run %d (shuffled input: %v) wrote different bytes (%d vs %d)", name, run, run > 0, len(b), len(again[name]))
			}
		}
	}
	if bytes.Contains(first["indicators"], []byte("build")) {
		t.Error("footer mentions a build")
	}
}

func TestRowGroupsAndStreaming(t *testing.T) {
	// 2500 observation rows in 3 batches of talhões, row groups of 1000.
	var batches [][]export.ObsRow
	v := float32(0.1)
	for f := 0; f < 3; f++ {
		var rows []export.ObsRow
		for c := 0; c < 25; c++ {
			for day := 0; day < 33 || (f == 2 && day < 34); day++ {
				rows = append(rows, export.ObsRow{FieldID: fmt.Sprintf("F%02d", f), CellID: fmt.Sprintf("r000c%03d", c),
					Date: exporttest.Day("2024-01-01") + zarc.Date(day*5), Collection: "sentinel-2-l2a", ItemID: fmt.Sprint("item", day), NDVI: &v, NDTI: &v})
			}
		}
		batches = append(batches, rows)
	}
	var buf bytes.Buffer
	w := export.NewWriter[export.ObsRow](&buf, export.Options{RowGroupRows: 1000})
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(batches[0][:3]); !errors.Is(err, export.ErrUnsorted) {
		t.Errorf("Write(out of order) = %v, want ErrUnsorted", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Rows() != 2500 {
		t.Fatalf("Rows() = %d, want 2500", w.Rows())
	}
	af := readArrow(t, buf.Bytes())
	if !slices.Equal(af.rowGroups, []int64{1000, 1000, 500}) {
		t.Errorf("row groups = %v, want [1000 1000 500]", af.rowGroups)
	}
	if af.rows[2499]["field_id"] != "F02" || af.rows[0]["date"] != "2024-01-01" {
		t.Errorf("first/last rows %v / %v", af.rows[0], af.rows[2499])
	}
}

func TestPartName(t *testing.T) {
	tests := []struct {
		name    string
		ds      string
		i, n    int
		want    string
		wantPan bool
	}{
		{"unsharded", "indicators", 0, 1, "indicators.parquet", false},
		{"suffix kept once", "indicators.parquet", 0, 1, "indicators.parquet", false},
		{"part 3 of 16", "indicators", 3, 16, "indicators.parquet/part-00003-of-00016.parquet", false},
		{"last", "observations", 15, 16, "observations.parquet/part-00015-of-00016.parquet", false},
		{"out of range", "cells", 16, 16, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); (r != nil) != tc.wantPan {
					t.Errorf("panic = %v, want panic %v", r, tc.wantPan)
				}
			}()
			if got := export.PartName(tc.ds, tc.i, tc.n); got != tc.want {
				t.Errorf("PartName(%q, %d, %d) = %q, want %q", tc.ds, tc.i, tc.n, got, tc.want)
			}
		})
	}
}

func TestReadDatasetParts(t *testing.T) {
	fx := exporttest.New(t)
	fsys := fstest.MapFS{}
	for i, r := range fx.Indicators {
		var b bytes.Buffer
		if err := export.Write(&b, []export.IndicatorRow{r}, export.Options{}); err != nil {
			t.Fatal(err)
		}
		fsys[export.PartName("indicators", len(fx.Indicators)-1-i, len(fx.Indicators))] = &fstest.MapFile{Data: b.Bytes()}
	}
	got, err := export.ReadDataset[export.IndicatorRow](fsys)
	if err != nil {
		t.Fatal(err)
	}
	// part 0 holds the last fixture row (MT-SIN-001), part 1 the first.
	if len(got) != 2 || got[0].FieldID != "MT-SIN-001" || got[1].FieldID != "MT-SIN-002" || *got[1].CPct != 79.45 {
		t.Errorf("ReadDataset = %+v", got)
	}
	var single bytes.Buffer
	if err := export.Write(&single, slices.Clone(fx.Indicators), export.Options{}); err != nil {
		t.Fatal(err)
	}
	got2, err := export.ReadDataset[export.IndicatorRow](fstest.MapFS{"indicators.parquet": {Data: single.Bytes()}})
	if err != nil || len(got2) != 2 {
		t.Errorf("ReadDataset(single) = %d rows, %v", len(got2), err)
	}
	if _, err := export.ReadDataset[export.IndicatorRow](fstest.MapFS{}); err == nil {
		t.Error("ReadDataset(empty dir) succeeded")
	}
}
