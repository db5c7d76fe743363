package report

import (
	"math"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"

	"github.com/manejo/manejo/export"
)

// TestMapCellsDrawCellCover checks that a cell's colour is the mean of its
// cover_pct over the seasons it had a reading in, as the run wrote them,
// and that a cell without any reading is drawn as "no reading".
func TestMapCellsDrawCellCover(t *testing.T) {
	square := func(x float64) []byte {
		b, err := wkb.Marshal(orb.Polygon{{{x, 0}, {x + 1, 0}, {x + 1, 1}, {x, 1}, {x, 0}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fd := &fieldData{
		cells: []export.CellRow{{FieldID: "F", CellID: "a", Geometry: square(0)}, {FieldID: "F", CellID: "b", Geometry: square(1)}},
		covers: []export.CellCoverRow{
			{FieldID: "F", CellID: "a", Season: "2023/2024", CoverPct: new(40.0), NObs: 2},
			{FieldID: "F", CellID: "a", Season: "2024/2025", NObs: 0},
			{FieldID: "F", CellID: "a", Season: "2025/2026", CoverPct: new(70.0), NObs: 3},
			{FieldID: "F", CellID: "b", Season: "2023/2024", NObs: 0},
		},
	}
	mc := mapCells(fd)
	if len(mc) != 2 || mc[0].id != "a" || mc[0].cover != 55 || mc[1].id != "b" || !math.IsNaN(mc[1].cover) {
		t.Fatalf("mapCells = %+v, want a at 55 %% and b without reading", mc)
	}
}
