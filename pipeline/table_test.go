package pipeline

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/sinm"
)

// exportTable writes a run's observations as an observation table (CSV):
// one row per observation, the cell centre as the point, the cell's border
// flag, the talhão's crop, area and mean slope, as an analyst would export
// them with DuckDB (a join of observations, cells and indicators).
func exportTable(tb testing.TB, fsys fs.FS, fields []grid.Field, path string) int {
	tb.Helper()
	obs, err := export.ReadDataset[export.ObsRow](fsys)
	if err != nil {
		tb.Fatal(err)
	}
	cells, err := export.ReadDataset[export.CellRow](fsys)
	if err != nil {
		tb.Fatal(err)
	}
	inds, err := export.ReadDataset[export.IndicatorRow](fsys)
	if err != nil {
		tb.Fatal(err)
	}
	type key struct{ f, c string }
	cellOf := map[key]export.CellRow{}
	for _, c := range cells {
		cellOf[key{c.FieldID, c.CellID}] = c
	}
	indOf := map[string]export.IndicatorRow{}
	for _, r := range inds {
		indOf[r.FieldID] = r
	}
	fieldOf := map[string]grid.Field{}
	for _, f := range fields {
		fieldOf[f.ID] = f
	}
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	flag := func(v *int) string {
		if v == nil {
			return ""
		}
		return strconv.Itoa(*v)
	}
	f32 := func(v *float32) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(float64(*v), 'g', -1, 32)
	}
	f64 := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"field_id", "point_id", "lon", "lat", "date", "collection", "item_id", "mask_reason", "ndvi", "ndti",
		"red", "nir", "swir16", "swir22", "border", "crop", "area_ha", "slope_pct", "plantio_contorno", "terraceamento"})
	for _, o := range obs {
		c, ind, field := cellOf[key{o.FieldID, o.CellID}], indOf[o.FieldID], fieldOf[o.FieldID]
		slope := ""
		if ind.SlopeMeanPct != nil {
			slope = f64(*ind.SlopeMeanPct)
		}
		_ = w.Write([]string{o.FieldID, o.CellID, f64(c.CentreLon), f64(c.CentreLat), o.Date.String(), o.Collection, o.ItemID,
			deref(o.MaskReason), f32(o.NDVI), f32(o.NDTI), f32(o.Red), f32(o.NIR), f32(o.SWIR16), f32(o.SWIR22),
			strconv.FormatBool(c.Border), ind.Crop, f64(ind.AreaHa), slope, flag(field.PlantioContorno), flag(field.Terraceamento)})
	}
	w.Flush()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return len(obs)
}

// TestAnalyseReproducesRun is the acceptance test of manejo analyse (issue
// 17 item 4): the reference run's own observations, exported to CSV,
// analysed by AnalyseTable with the same season, as-of date, sowing file
// and codes, give the same events, seasons, cell covers, cycles and SINM
// payloads, byte for byte, and the same indicators but for what a table
// of points cannot carry (cell size, MODIS eligibility, slope median and
// 90th percentile, which need the polygon and the DEM).
func TestAnalyseReproducesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	t.Parallel()
	dir := archive(t)
	runOut, _ := reference(t)
	table := filepath.Join(t.TempDir(), "observations.csv")
	base := baseConfig(t, dir, runOut)
	// The declared contour planting and terracing are talhão properties.
	fields, _, err := ReadFields(context.Background(), base.Fields, "id")
	if err != nil {
		t.Fatal(err)
	}
	n := exportTable(t, os.DirFS(runOut), fields, table)
	out := t.TempDir()
	sum, err := AnalyseTable(context.Background(), TableConfig{Observations: table, Sowing: base.Sowing, Out: out,
		Season: base.Season, AsOf: base.AsOf, Codes: base.Codes, Version: base.Version, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows: %+v", n, sum)
	if sum.Total != 6 || sum.Failed != 0 {
		t.Fatalf("summary %+v, want the 6 good talhões of the run, none failed", sum)
	}
	a, b := os.DirFS(runOut), os.DirFS(out)
	sameRows[export.ObsRow](t, a, b)
	sameRows[export.EventRow](t, a, b)
	sameRows[export.SeasonRow](t, a, b)
	sameRows[export.CellCoverRow](t, a, b)
	sameRows[export.CycleRow](t, a, b)
	if cells, err := export.ReadDataset[export.CellRow](b); err != nil || len(cells) != 0 {
		t.Errorf("cells.parquet of an analysis: %d rows (%v), want none", len(cells), err)
	}
	runInd, _ := export.ReadDataset[export.IndicatorRow](a)
	tabInd, err := export.ReadDataset[export.IndicatorRow](b)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]export.IndicatorRow{}
	for _, r := range tabInd {
		byID[r.FieldID] = r
	}
	compared, payloads := 0, 0
	for _, want := range runInd {
		got, ok := byID[want.FieldID]
		if !ok {
			continue // the run's talhão whose grid failed has no observation
		}
		compared++
		want.CellSizeHa, want.MODISEligible, want.SlopeMedianPct, want.SlopeP90Pct = 0, false, nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("indicators of %s:\n got %s\nwant %s", want.FieldID, show(got), show(want))
		}
		pa, errA := os.ReadFile(filepath.Join(runOut, sinm.PayloadName(want.FieldID)))
		pb, errB := os.ReadFile(filepath.Join(out, sinm.PayloadName(want.FieldID)))
		if errA == nil {
			payloads++
			if errB != nil || !bytes.Equal(pa, pb) {
				i := 0
				for i < min(len(pa), len(pb)) && pa[i] == pb[i] {
					i++
				}
				t.Errorf("payload of %s differs from the run's (%v) at byte %d: run %q, analysis %q", want.FieldID, errB, i, pa[max(0, i-80):min(len(pa), i+80)], pb[max(0, i-80):min(len(pb), i+80)])
			}
		}
	}
	if compared != 6 || payloads == 0 {
		t.Errorf("compared %d talhões and %d payloads, want 6 and some", compared, payloads)
	}
}

// sameRows checks that dataset T holds the same rows in both outputs.
func sameRows[T export.Row](t *testing.T, a, b fs.FS) {
	t.Helper()
	ra, err := export.ReadDataset[T](a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := export.ReadDataset[T](b)
	if err != nil {
		t.Fatal(err)
	}
	name := export.DatasetOf[T]().Name
	if len(ra) == 0 {
		t.Errorf("%s: the run has no rows", name)
	}
	if len(ra) != len(rb) {
		t.Errorf("%s: run %d rows, analysis %d", name, len(ra), len(rb))
		return
	}
	for i := range ra {
		if !reflect.DeepEqual(ra[i], rb[i]) {
			t.Errorf("%s row %d:\n run      %s\n analysis %s", name, i, show(ra[i]), show(rb[i]))
			return
		}
	}
	t.Logf("%s: %d rows, the same", name, len(ra))
}

// show prints a row with its optional values dereferenced.
func show(v any) string {
	rv := reflect.ValueOf(v)
	var b bytes.Buffer
	for i := range rv.NumField() {
		f := rv.Field(i)
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			f = f.Elem()
		}
		fmt.Fprintf(&b, "%s=%v ", rv.Type().Field(i).Name, f)
	}
	return b.String()
}
