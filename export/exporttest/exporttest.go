// Package exporttest holds the hand-checked output rows shared by the tests
// of export (the Parquet datasets) and sinm (the payload built from the same
// rows): one fixture, so both packages test the same talhões. It is imported
// by _test.go files only.
package exporttest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
)

// Fixture is a small, hand-checked output of two talhões near Sinop (MT):
// MT-SIN-002 (2 cells, 2 dates × 2 collections, one masked scene, one
// event, three seasons, two cycles) and MT-SIN-001 (1 cell), given in
// unsorted order on purpose.
type Fixture struct {
	Fields     []grid.Field
	Cells      []export.CellRow
	Obs        []export.ObsRow
	Events     []export.EventRow
	Seasons    []export.SeasonRow
	Cycles     []export.CycleRow
	Indicators []export.IndicatorRow
}

// Day parses a YYYY-MM-DD day; it panics on a malformed literal.
func Day(s string) zarc.Date {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return zarc.DateOf(t)
}

// DayPtr is Day as an optional column value.
func DayPtr(s string) *zarc.Date { return new(Day(s)) }

func square(lon, lat, side float64) orb.Polygon {
	return orb.Polygon{{{lon, lat}, {lon + side, lat}, {lon + side, lat + side}, {lon, lat + side}, {lon, lat}}}
}

func cellOf(tb testing.TB, field, id string, row, col int, lon, lat float64) export.CellRow {
	tb.Helper()
	const side = 0.01 // ~1.1 km at -11.77°: not a legal cell, only a fixture
	r, err := export.NewCellRow(grid.Cell{FieldID: field, ID: id, Row: row, Col: col,
		Centre: orb.Point{lon + side/2, lat + side/2}, Polygon: square(lon, lat, side),
		AreaHa: 121.3, Border: row == 0, MODIS: col == 1})
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// New returns a fresh copy of the fixture (callers may modify it).
func New(tb testing.TB) Fixture {
	tb.Helper()
	d, dp := Day, DayPtr
	var fx Fixture
	fx.Fields = []grid.Field{
		{ID: "MT-SIN-002", Crop: zarc.Milho, CPFProdutor: "529.982.247-25", CNPJPropriedade: "11.222.333/0001-81", PlantioContorno: new(1), Terraceamento: new(0)},
		{ID: "MT-SIN-001", Crop: zarc.Soja, CPFProdutor: "123.456.789-00"}, // wrong check digits
	}
	fx.Cells = []export.CellRow{
		cellOf(tb, "MT-SIN-002", "r000c001", 0, 1, -55.612, -11.781),
		cellOf(tb, "MT-SIN-002", "r000c000", 0, 0, -55.622, -11.781),
		cellOf(tb, "MT-SIN-001", "r000c000", 0, 0, -55.655, -11.772),
	}
	fx.Obs = []export.ObsRow{
		{FieldID: "MT-SIN-002", CellID: "r000c001", Date: d("2025-09-22"), Collection: "sentinel-2-l2a", ItemID: "S2B_21LXH_20250922_0_L2A", NDVI: new(float32(0.19874)), NDTI: new(float32(0.06105))},
		{FieldID: "MT-SIN-002", CellID: "r000c000", Date: d("2025-09-22"), Collection: "sentinel-2-l2a", ItemID: "S2B_21LXH_20250922_0_L2A", NDVI: new(float32(0.2134)), NDTI: new(float32(0.1532))},
		{FieldID: "MT-SIN-002", CellID: "r000c000", Date: d("2025-09-12"), Collection: "sentinel-2-l2a", ItemID: "S2A_21LXH_20250912_0_L2A", NDVI: new(float32(0.21336)), NDTI: new(float32(0.15324))},
		{FieldID: "MT-SIN-002", CellID: "r000c000", Date: d("2025-09-12"), Collection: "landsat-c2-l2", ItemID: "LC09_L2SP_226068_20250912_02_T1", MaskReason: new("cloud")},
		{FieldID: "MT-SIN-002", CellID: "r000c001", Date: d("2025-09-12"), Collection: "landsat-c2-l2", ItemID: "LC09_L2SP_226068_20250912_02_T1", NDVI: new(float32(-0.00004)), NDTI: new(float32(0.0231))},
		{FieldID: "MT-SIN-001", CellID: "r000c000", Date: d("2025-10-02"), Collection: "sentinel-2-l2a", ItemID: "S2A_21LXH_20251002_0_L2A", NDVI: new(float32(0.5)), NDTI: new(float32(0.25))},
	}
	fx.Events = []export.EventRow{
		{FieldID: "MT-SIN-002", Date: d("2025-09-22"), Before: d("2025-09-12"), After: d("2025-09-22"), CellFraction: 0.5, NCells: 1, MagnitudeSigma: 4.25, Operation: new("gradagem"),
			Test: "ndti-step", NInterior: 1, NDTIDrop: new(float32(0.0625)), NDTINoise: new(float32(0.0125)), DatesBefore: 5, DatesAfter: 3, Sensors: []string{"landsat-c2-l2", "sentinel-2-l2a"}},
		{FieldID: "MT-SIN-002", Date: d("2023-08-03"), Before: d("2023-07-20"), After: d("2023-08-03"), CellFraction: 1, NCells: 2, MagnitudeSigma: 3.5, Test: "straw-share", NInterior: 2},
	}
	fx.Seasons = []export.SeasonRow{
		{FieldID: "MT-SIN-002", Season: "2024/25", Crop: "milho", SowingDate: dp("2024-10-09"), SowingSource: new("declared"), Decendio: new(int32(28)), WindowStart: dp("2024-09-09"), WindowEnd: dp("2024-10-08"), CoverPct: new(76.5), NCells: 2, NObs: 5},
		{FieldID: "MT-SIN-002", Season: "2023/24", Crop: "milho", SowingDate: dp("2023-10-14"), SowingSource: new("detected"), SowingConfidence: new(float32(0.8)), Decendio: new(int32(29)), WindowStart: dp("2023-09-14"), WindowEnd: dp("2023-10-13"), CoverDate: dp("2023-10-13"), CoverPct: new(82.4), NCells: 2, NObs: 4},
		{FieldID: "MT-SIN-002", Season: "2025/26", Crop: "milho", NCells: 0, NObs: 0, Reason: new("no sowing detected")},
	}
	fx.Cycles = []export.CycleRow{
		{FieldID: "MT-SIN-002", Season: "2025/26", Cycle: 1, Kind: "Cultivo de 1ª safra", Crop: new("soja"), StartDate: d("2025-11-12"), EndDate: d("2026-02-10"), SowingDate: dp("2025-10-18"), PeakNDVI: new(float32(0.86))},
		{FieldID: "MT-SIN-002", Season: "2025/26", Cycle: 2, Kind: "Cultivo de 2ª safra", StartDate: d("2026-03-14"), EndDate: d("2026-06-15"), SowingDate: dp("2026-02-12")},
	}
	fx.Indicators = []export.IndicatorRow{
		{FieldID: "MT-SIN-002", Crop: "milho", AreaHa: 242.6, CellSizeHa: 5, NCells: 2, Sensors: []string{"landsat-c2-l2", "sentinel-2-l2a"},
			MODISEligible: true, PeriodStart: dp("2023-07-01"), PeriodEnd: dp("2026-06-30"),
			TYears: new(0.77), TLevel: new(int32(1)), LastEvent: dp("2025-09-22"),
			CPct: new(79.45), CLevel: new(int32(3)), CSeasons: []string{"2023/24", "2024/25", "2025/26"}, CSeason1Pct: new(82.4), CSeason2Pct: new(76.5),
			SlopeMeanPct: new(3.6), SlopeMedianPct: new(3.1), SlopeP90Pct: new(7.9), ContourRequired: new(true), DeclividadeMedia: new(int32(4)),
			Status: export.StatusPartial, Reasons: []string{"c_season_3: no sowing detected"}},
		{FieldID: "MT-SIN-001", Crop: "soja", AreaHa: 31.2, CellSizeHa: 1, NCells: 1, Sensors: []string{"sentinel-2-l2a"},
			PeriodStart: dp("2023-07-01"), PeriodEnd: dp("2026-06-30"), TYearsMin: new(2.9), TCensored: true,
			Status: export.StatusFailed, Reasons: []string{"slope: DEM does not cover the talhão", "coverage: no clear observation"}},
	}
	return fx
}

// Field returns the talhão id of the fixture.
func (fx Fixture) Field(id string) grid.Field {
	for _, f := range fx.Fields {
		if f.ID == id {
			return f
		}
	}
	return grid.Field{}
}

// Indicator returns the indicators row of talhão id.
func (fx Fixture) Indicator(id string) export.IndicatorRow {
	for _, r := range fx.Indicators {
		if r.FieldID == id {
			return r
		}
	}
	return export.IndicatorRow{}
}

// Observations builds n observation rows (for benchmarks) shaped like a real run: talhões of 200
// cells, scenes every 5 days, ~15 % masked, NDVI/NDTI with 4 significant
// decimals of noise around a seasonal curve.
func Observations(tb testing.TB, n int) []export.ObsRow {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	const cells, dates = 200, 250
	rows := make([]export.ObsRow, 0, n)
	masks := []string{"cloud", "shadow", "nodata"}
	for f := 0; len(rows) < n; f++ {
		field := fmt.Sprintf("MT-%05d", f)
		for c := 0; c < cells && len(rows) < n; c++ {
			cell := fmt.Sprintf("r%03dc%03d", c/20, c%20)
			for k := 0; k < dates && len(rows) < n; k++ {
				r := export.ObsRow{FieldID: field, CellID: cell, Date: zarc.Date(19000 + 5*k), Collection: "sentinel-2-l2a",
					ItemID: fmt.Sprintf("S2A_21LXH_%d_0_L2A", 19000+5*k)}
				if rng.Float64() < 0.15 {
					r.MaskReason = &masks[rng.IntN(len(masks))]
				} else {
					v := float32(0.5 + 0.3*float64(k%73)/73 + rng.NormFloat64()*0.03)
					w := float32(0.1 + rng.NormFloat64()*0.02)
					r.NDVI, r.NDTI = &v, &w
				}
				rows = append(rows, r)
			}
		}
	}
	return rows
}
