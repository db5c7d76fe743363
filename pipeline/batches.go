package pipeline

import (
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/zarc"
)

// DefaultBatchCellScenes is the default Config.BatchCellScenes: a batch
// holds at most about a million cell × scene pairs, about 1.1 GB at the
// peak of its analysis (1.1 KB a pair, as Config.MaxCellScenes), however
// large its talhões. A batch of 64 talhões of 40 cells under four years of
// Sentinel-2 and Landsat (about 440 scenes) holds 1.1 million.
const DefaultBatchCellScenes = 1_000_000

// cutBatches cuts the shard's talhões (in id order) into its batches, in
// order: at most cfg.BatchSize talhões each and, unless
// cfg.BatchCellScenes is negative, at most that many cell × scene pairs
// (0: DefaultBatchCellScenes), a talhão over it being a batch alone. A
// talhão's pairs are its cells (cellsOf) times the catalog's scenes over
// it between cfg.From and cfg.AsOf (scenesOver); without a catalog only
// the count bounds a batch.
// A batch's memory is about its pairs: with the count alone, a portfolio
// of large talhões made batches far heavier than a small portfolio's one
// batch of mixed sizes (issue 26: peak RSS ×1.63 from 75 to 750 talhões).
// most is the pairs of the heaviest batch (0 without a pair budget or a
// catalog): a talhão alone over the budget makes it exceed the budget.
func cutBatches(owned []grid.Field, cfg Config, cat *series.Catalog) (batches [][]grid.Field, most int64) {
	limit := float64(cfg.BatchCellScenes)
	if cfg.BatchCellScenes == 0 {
		limit = DefaultBatchCellScenes
	}
	var out [][]grid.Field
	start, acc := 0, 0.0
	for i, f := range owned {
		pairs := 0.0
		if cat != nil && limit > 0 {
			pairs = float64(cellsOf(f, cfg.Grid) * scenesOver(cat, f, cfg))
		}
		if i > start && (i-start == cfg.BatchSize || (limit > 0 && acc+pairs > limit)) {
			out = append(out, owned[start:i])
			start, acc = i, 0
		}
		acc += pairs
		most = max(most, int64(acc))
	}
	if start < len(owned) {
		out = append(out, owned[start:])
	}
	return out, most
}

// cellsOf is the number of cells of f's grid (0 when it fails: its batch
// fails it before any read). The grid is built and dropped: about a
// millisecond a talhão, against the area estimate of spatial shards
// (estimatedCells), which missed the designed talhões of sim/synth by
// −14 % to +6 % and so let batches of large talhões hold more pairs than
// a small portfolio's.
func cellsOf(f grid.Field, o grid.Options) int {
	g, err := grid.Build(f, o)
	if err != nil {
		return 0
	}
	return len(g.Cells)
}

// scenesOver counts the catalog's items whose bounding box meets the
// talhão's between cfg.From and cfg.AsOf: the scenes cat.Select gives it,
// or a few more (the items' footprints are not intersected: an estimate,
// and a cheap one, of each talhão of the shard).
func scenesOver(cat *series.Catalog, f grid.Field, cfg Config) int {
	fb := f.Geometry.Bound()
	from, to := zarc.Day(cfg.From), zarc.Day(cfg.AsOf)
	n := 0
	for _, it := range cat.Items {
		if d := zarc.Day(it.Datetime); (!cfg.From.IsZero() && d.Before(from)) || (!cfg.AsOf.IsZero() && d.After(to)) {
			continue
		}
		if it.BBox.Intersects(fb) {
			n++
		}
	}
	return n
}
