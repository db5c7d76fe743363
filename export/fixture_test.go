package export

import (
	"math"
	"testing"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/paulmach/orb"
)

// fixture is a small, hand-checked output of two talhões near Sinop (MT):
// MT-SIN-002 (2 cells, 2 dates × 2 collections, one masked scene, one
// event, three seasons, two cycles) and MT-SIN-001 (1 cell), given in
// unsorted order on purpose.
type fixture struct {
	fields  []grid.Field
	cells   []CellRow
	obs     []ObsRow
	events  []EventRow
	seasons []SeasonRow
	cycles  []CycleRow
	inds    []IndicatorRow
}

func d(s string) Date {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return DateOf(t)
}

func dp(s string) *Date      { v := d(s); return &v }
func f32(v float32) *float32 { return &v }
func f64(v float64) *float64 { return &v }
func i32(v int32) *int32     { return &v }
func ptrInt(v int) *int      { return &v }
func ptrBool(v bool) *bool   { return &v }
func square(lon, lat, side float64) orb.Polygon {
	return orb.Polygon{{{lon, lat}, {lon + side, lat}, {lon + side, lat + side}, {lon, lat + side}, {lon, lat}}}
}

func cellOf(t testing.TB, field, id string, row, col int, lon, lat float64) CellRow {
	t.Helper()
	const side = 0.01 // ~1.1 km at -11.77°: not a legal cell, only a fixture
	r, err := NewCellRow(grid.Cell{FieldID: field, ID: id, Row: row, Col: col,
		Centre: orb.Point{lon + side/2, lat + side/2}, Polygon: square(lon, lat, side),
		AreaHa: 121.3, Border: row == 0, MODIS: col == 1})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	var fx fixture
	fx.fields = []grid.Field{
		{ID: "MT-SIN-002", Crop: grid.Milho, CPFProdutor: "529.982.247-25", CNPJPropriedade: "11.222.333/0001-81", PlantioContorno: ptrInt(1), Terraceamento: ptrInt(0)},
		{ID: "MT-SIN-001", Crop: grid.Soja, CPFProdutor: "123.456.789-00"}, // wrong check digits
	}
	fx.cells = []CellRow{
		cellOf(t, "MT-SIN-002", "r000c001", 0, 1, -55.612, -11.781),
		cellOf(t, "MT-SIN-002", "r000c000", 0, 0, -55.622, -11.781),
		cellOf(t, "MT-SIN-001", "r000c000", 0, 0, -55.655, -11.772),
	}
	fx.obs = []ObsRow{
		{FieldID: "MT-SIN-002", CellID: "r000c001", Date: d("2025-09-22"), Collection: "sentinel-2-l2a", ItemID: "S2B_21LXH_20250922_0_L2A", NDVI: f32(0.19874), NDTI: f32(0.06105)},
		{FieldID: "MT-SIN-002", CellID: "r000c000", Date: d("2025-09-22"), Collection: "sentinel-2-l2a", ItemID: "S2B_21LXH_20250922_0_L2A", NDVI: f32(0.2134), NDTI: f32(0.1532)},
		{FieldID: "MT-SIN-002", CellID: "r000c000", Date: d("2025-09-12"), Collection: "sentinel-2-l2a", ItemID: "S2A_21LXH_20250912_0_L2A", NDVI: f32(0.21336), NDTI: f32(0.15324)},
		{FieldID: "MT-SIN-002", CellID: "r000c000", Date: d("2025-09-12"), Collection: "landsat-c2-l2", ItemID: "LC09_L2SP_226068_20250912_02_T1", MaskReason: OptString("cloud")},
		{FieldID: "MT-SIN-002", CellID: "r000c001", Date: d("2025-09-12"), Collection: "landsat-c2-l2", ItemID: "LC09_L2SP_226068_20250912_02_T1", NDVI: f32(-0.00004), NDTI: f32(0.0231)},
		{FieldID: "MT-SIN-001", CellID: "r000c000", Date: d("2025-10-02"), Collection: "sentinel-2-l2a", ItemID: "S2A_21LXH_20251002_0_L2A", NDVI: f32(0.5), NDTI: f32(0.25)},
	}
	fx.events = []EventRow{
		{FieldID: "MT-SIN-002", Date: d("2025-09-22"), Before: d("2025-09-12"), After: d("2025-09-22"), CellFraction: 0.5, NCells: 1, MagnitudeSigma: 4.25, Operation: OptString("gradagem")},
		{FieldID: "MT-SIN-002", Date: d("2023-08-03"), Before: d("2023-07-20"), After: d("2023-08-03"), CellFraction: 1, NCells: 2, MagnitudeSigma: 3.5},
	}
	fx.seasons = []SeasonRow{
		{FieldID: "MT-SIN-002", Season: "2024/25", Crop: "milho", SowingDate: dp("2024-10-09"), SowingSource: OptString("declared"), Decendio: i32(28), WindowStart: dp("2024-09-09"), WindowEnd: dp("2024-10-08"), CoverPct: f64(76.5), NCells: 2, NObs: 5},
		{FieldID: "MT-SIN-002", Season: "2023/24", Crop: "milho", SowingDate: dp("2023-10-14"), SowingSource: OptString("detected"), SowingConfidence: f32(0.8), Decendio: i32(29), WindowStart: dp("2023-09-14"), WindowEnd: dp("2023-10-13"), CoverDate: dp("2023-10-13"), CoverPct: f64(82.4), NCells: 2, NObs: 4},
		{FieldID: "MT-SIN-002", Season: "2025/26", Crop: "milho", NCells: 0, NObs: 0, Reason: OptString("no sowing detected")},
	}
	fx.cycles = []CycleRow{
		{FieldID: "MT-SIN-002", Season: "2025/26", Cycle: 1, Kind: "Cultivo de 1ª safra", Crop: OptString("soja"), StartDate: d("2025-10-18"), EndDate: d("2026-02-10"), PeakNDVI: f32(0.86)},
		{FieldID: "MT-SIN-002", Season: "2025/26", Cycle: 2, Kind: "Cultivo de 2ª safra", StartDate: d("2026-02-20"), EndDate: d("2026-06-15")},
	}
	fx.inds = []IndicatorRow{
		{FieldID: "MT-SIN-002", Crop: "milho", AreaHa: 242.6, CellSizeHa: 5, NCells: 2, Sensors: []string{"landsat-c2-l2", "sentinel-2-l2a"},
			MODISEligible: true, PeriodStart: dp("2023-07-01"), PeriodEnd: dp("2026-06-30"),
			TYears: f64(0.77), TLevel: i32(1), LastEvent: dp("2025-09-22"),
			CPct: f64(79.45), CLevel: i32(3), CSeasons: []string{"2023/24", "2024/25", "2025/26"}, CSeason1Pct: f64(82.4), CSeason2Pct: f64(76.5),
			SlopeMeanPct: f64(3.6), SlopeMedianPct: f64(3.1), SlopeP90Pct: f64(7.9), ContourRequired: ptrBool(true), DeclividadeMedia: i32(4),
			Status: StatusPartial, Reasons: []string{"c_season_3: no sowing detected"}},
		{FieldID: "MT-SIN-001", Crop: "soja", AreaHa: 31.2, CellSizeHa: 1, NCells: 1, Sensors: []string{"sentinel-2-l2a"},
			PeriodStart: dp("2023-07-01"), PeriodEnd: dp("2026-06-30"), TYearsMin: f64(2.9), TCensored: true,
			Status: StatusFailed, Reasons: []string{"slope: DEM does not cover the talhão", "coverage: no clear observation"}},
	}
	return fx
}

// payloadInput selects the rows of one talhão of the fixture.
func (fx fixture) payloadInput(id string) PayloadInput {
	in := PayloadInput{Cells: fx.cells, Observations: fx.obs, Events: fx.events, Seasons: fx.seasons, Cycles: fx.cycles}
	for _, f := range fx.fields {
		if f.ID == id {
			in.Field = f
		}
	}
	for _, r := range fx.inds {
		if r.FieldID == id {
			in.Indicator = r
		}
	}
	return in
}

var testCodes = SatelliteCodes{"sentinel-2-l2a": "S01", "landsat-c2-l2": "S02", "dem": "S09"}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
