package pipeline

import (
	"context"

	"github.com/manejo/manejo/cache"
	"github.com/manejo/manejo/grid"
)

// beginCache loads the observation cache of a batch's talhões when the run
// has one (Config.Cache); nil otherwise.
func (s *stage) beginCache(ctx context.Context, grids []grid.Grid) (*cache.Batch, error) {
	cfg := s.in.cfg
	if cfg.Cache == "" {
		return nil, nil
	}
	return cache.Open(cfg.Cache).Begin(ctx, grids, cfg.Grid, cfg.Version, cfg.SeriesProfiles)
}

// addCacheStats records in run.json what the cache served and saved
// (docs/cache.md, "Accounting").
func (sum *batchSummary) addCacheStats(st cache.Stats) {
	for state, n := range st.Entries {
		sum.Counts["cache_talhoes_"+state] += int64(n)
	}
	c := sum.Counts
	c["cache_pairs_served"] += int64(st.PairsServed)
	c["cache_pairs_read"] += int64(st.PairsRead)
	c["cache_observations_served"] += int64(st.ObsServed)
	c["cache_scenes_served"] += int64(st.ScenesServed)
	c["cache_gdal_reads_saved"] += st.ReadsSaved
	c["cache_gdal_read_bytes_saved"] += st.BytesSaved
	c["cache_partitions_written"] += int64(st.Written)
	c["cache_bytes_written"] += st.WrittenBytes
	sum.Warnings = append(sum.Warnings, st.Warnings...)
}
