package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/paulmach/orb"
)

// squareField is a talhão of about ha hectares near Sinop: a square of
// side sqrt(ha) hm (0.009° of latitude is about 1 km).
func squareField(id string, ha float64) grid.Field {
	side := 0.0009 * math.Sqrt(ha)
	lon, lat := -55.6, -11.8
	ring := orb.Ring{{lon, lat}, {lon + side, lat}, {lon + side, lat + side}, {lon, lat + side}, {lon, lat}}
	return grid.Field{ID: id, Geometry: orb.MultiPolygon{{ring}}}
}

// TestCutBatches: batches keep the talhões' order, hold at most
// BatchSize talhões and at most BatchCellScenes cell × scene
// pairs (a talhão over it alone), and each is cut only when the next
// talhão would break one of the two bounds; without a catalog, or with a
// negative bound, the count alone cuts them.
func TestCutBatches(t *testing.T) {
	var cat series.Catalog
	d0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 100 {
		b := orb.Bound{Min: orb.Point{-56, -12.5}, Max: orb.Point{-55, -11}}
		if i%4 == 3 { // a quarter of the scenes elsewhere
			b = orb.Bound{Min: orb.Point{-50, -12.5}, Max: orb.Point{-49, -11}}
		}
		cat.Items = append(cat.Items, &series.Item{ID: fmt.Sprint(i), Datetime: d0.AddDate(0, 0, 5*i), BBox: b})
	}
	var owned []grid.Field
	for i := range 300 {
		ha := []float64{20, 300, 76, 150, 45, 40, 2000}[i%7]
		owned = append(owned, squareField(fmt.Sprintf("T%03d", i), ha))
	}
	cfg := Config{BatchSize: 64, From: d0, AsOf: d0.AddDate(0, 0, 5*79)} // 80 dates, 60 scenes over the talhões
	pairs := func(f grid.Field) float64 { return float64(cellsOf(f, cfg.Grid) * 60) }
	if n := scenesOver(&cat, owned[0], cfg); n != 60 {
		t.Fatalf("scenes over a talhão: %d, want 60 (80 dates in range, a quarter elsewhere)", n)
	}
	for _, limit := range []int{0, 20_000, 100_000, -1} {
		cfg.BatchCellScenes = limit
		max := float64(limit)
		if limit == 0 {
			max = DefaultBatchCellScenes
		}
		batches, most := cutBatches(owned, cfg, &cat)
		checkBatches(t, fmt.Sprintf("limit %d", limit), owned, batches, cfg.BatchSize, max, pairs)
		if heaviest := heaviestBatch(batches, pairs); limit >= 0 && most != heaviest {
			t.Errorf("limit %d: heaviest batch reported %d pairs, counted %d", limit, most, heaviest)
		}
		if limit < 0 && len(batches) != 5 {
			t.Errorf("no pair limit: %d batches, want 300/64 → 5", len(batches))
		}
		if limit == 20_000 && len(batches) < 30 {
			t.Errorf("limit 20,000: %d batches, want ≥ 30 (300 talhões of about 90 cells × 60 scenes)", len(batches))
		}
	}
	if got, _ := cutBatches(owned, Config{BatchSize: 64, BatchCellScenes: 10}, nil); len(got) != 5 {
		t.Errorf("without a catalog: %d batches, want 5 (the count alone)", len(got))
	}
}

// checkBatches checks the batches of owned against the bounds.
func checkBatches(t *testing.T, what string, owned []grid.Field, batches [][]grid.Field, size int, limit float64, pairs func(grid.Field) float64) {
	t.Helper()
	var flat []string
	for i, b := range batches {
		sum := 0.0
		for _, f := range b {
			flat = append(flat, f.ID)
			sum += pairs(f)
		}
		if len(b) == 0 || len(b) > size {
			t.Errorf("%s: batch %d holds %d talhões, want 1–%d", what, i, len(b), size)
		}
		if limit > 0 && len(b) > 1 && sum > limit*(1+1e-9) {
			t.Errorf("%s: batch %d holds %.0f pairs over %d talhões, over the limit %.0f", what, i, sum, len(b), limit)
		}
		if i+1 < len(batches) && len(b) < size {
			next := pairs(batches[i+1][0])
			if limit <= 0 || sum+next <= limit*(1-1e-9) {
				t.Errorf("%s: batch %d (%d talhões, %.0f pairs) was cut although the next talhão (%.0f pairs) fit", what, i, len(b), sum, next)
			}
		}
	}
	var want []string
	for _, f := range owned {
		want = append(want, f.ID)
	}
	if strings.Join(flat, ",") != strings.Join(want, ",") {
		t.Errorf("%s: the batches do not hold the talhões once each in order", what)
	}
}

// TestBatchCellScenesSameRows: a run whose batches are cut by cell ×
// scene pairs (every talhão of the test archive a batch alone) writes the
// same rows in every dataset, and the same payloads byte for byte, as the
// reference run cut by count (3 talhões a batch); run.json records the
// setting.
func TestBatchCellScenesSameRows(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	t.Parallel()
	ref, _ := reference(t)
	out := t.TempDir()
	cfg := baseConfig(t, archive(t), out)
	cfg.BatchSize, cfg.BatchCellScenes = 64, 1000
	batches := 0
	cfg.OnProgress = func(p Progress) { batches = p.Batches }
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 7 talhões (BAD-BOWTIE, first, fails its grid): each designed one
	// is over 1,000 pairs, so every talhão is a batch alone.
	if batches != 7 || sum.Total != 7 {
		t.Errorf("%d batches of %d talhões, want 7 of 7: each talhão over 1,000 pairs, a batch alone", batches, sum.Total)
	}
	a, b := os.DirFS(ref), os.DirFS(out)
	sameRows[export.IndicatorRow](t, a, b)
	sameRows[export.CellRow](t, a, b)
	sameRows[export.ObsRow](t, a, b)
	sameRows[export.EventRow](t, a, b)
	sameRows[export.SeasonRow](t, a, b)
	sameRows[export.CellCoverRow](t, a, b)
	sameRows[export.CycleRow](t, a, b)
	samePayloads(t, "batches of 1,000 pairs", ref, out)
	var m *runManifest
	m, err = readManifest(context.Background(), out+"/run.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Parameters["batch-cell-scenes"] != "1000" {
		t.Errorf("run.json parameters %v: want batch-cell-scenes 1000", m.Parameters)
	}
}

// heaviestBatch is the pairs of the heaviest of batches, counted apart
// from cutBatches.
func heaviestBatch(batches [][]grid.Field, pairs func(grid.Field) float64) int64 {
	var most int64
	for _, b := range batches {
		sum := 0.0
		for _, f := range b {
			sum += pairs(f)
		}
		most = max(most, int64(sum))
	}
	return most
}
