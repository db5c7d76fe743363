package pipeline

import (
	"sort"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
)

// dropRefused fails the talhões series refused unread (too many cells ×
// scenes for the memory budget, series.Options.MaxCellScenes) with the
// reason series gave, and returns the other grids.
func dropRefused(grids []grid.Grid, refused map[string]string, sum *batchSummary) []grid.Grid {
	if len(refused) == 0 {
		return grids
	}
	kept := grids[:0:0]
	for _, g := range grids {
		if _, ok := refused[g.Field.ID]; !ok {
			kept = append(kept, g)
		}
	}
	ids := make([]string, 0, len(refused))
	for id := range refused {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		sum.Failures = append(sum.Failures, export.Failure{FieldID: id, Stage: "series", Status: export.StatusFailed, Reason: refused[id]})
	}
	return kept
}
