package pipeline

import (
	"context"
	"sort"
	"time"

	"github.com/manejo/manejo/cache"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/zarc"
)

// The read pass (issue 26). A batch reads each scene once for all its
// talhões, but the blocks a batch reads hold cells of other batches too:
// on a dense portfolio a run of 64-talhão batches read 8.2 times the
// compressed tiles it needed. The read pass reads, before the batches,
// the scenes of every talhão the shard still has to compute, in groups of
// neighbouring talhões (spatialGroups) large enough to cover whole image
// tiles, each scene once per group, and spills the observations to a
// local folder (spill); the batches then take their observations from it
// as from the observation cache, and read only what it lacks (scenes that
// failed there). The batches, their rows and every output are those of a
// run without it.

// Read pass modes (Config.ReadPass).
const (
	ReadPassAuto = "auto" // on when the catalog's assets are remote
	ReadPassOn   = "on"
	ReadPassOff  = "off"
)

// DefaultReadCells is the default Config.ReadCells: the cells of one group
// of the read pass. At the 16 bytes a cell × scene costs while its scenes
// are grouped, and the observations of the scenes in flight, a group's
// memory is set by it and by DefaultReadPairs, not by the portfolio.
const DefaultReadCells = 50_000

// DefaultReadPairs is the default Config.ReadPairs: the cell × scene pairs
// of one read of a group (its scenes are read in date ranges that fit).
const DefaultReadPairs = 2_000_000

// readDefaults fills the sharding, read pass and progress settings
// (Validate checked them).
func (c *Config) readDefaults() {
	if c.ShardBy == "" {
		c.ShardBy = ShardBySpace
	}
	if c.ReadPass == "" {
		c.ReadPass = ReadPassAuto
	}
	if c.ReadCells <= 0 {
		c.ReadCells = DefaultReadCells
	}
	if c.ReadPairs <= 0 {
		c.ReadPairs = DefaultReadPairs
	}
	if c.ExchangeWait == 0 {
		c.ExchangeWait = DefaultExchangeWait
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = 10 * time.Second
	}
}

// readPassWanted says whether the run reads ahead: on, or auto with a
// remote catalog, and a catalog to read (not a failed STAC search).
func (r *run) readPassWanted() bool {
	in := r.in
	if in == nil || in.cat == nil || in.searchErr != nil || len(in.cat.Items) == 0 {
		return false
	}
	switch r.cfg.ReadPass {
	case ReadPassOn:
		return true
	case ReadPassAuto:
		return in.cat.Remote()
	}
	return false
}

// readAhead runs the read pass over the talhões of the batches that are
// not committed yet, and leaves the spill in st for the batches. It
// returns an error only when the run is cancelled or the spill folder
// cannot be made.
func (r *run) readAhead(ctx context.Context, st *stage, batches [][]grid.Field) error {
	if !r.readPassWanted() {
		return nil
	}
	cfg := r.cfg
	pending := st.pending(ctx, batches)
	if len(pending) == 0 {
		return nil
	}
	sp, err := newSpill(r.logf)
	if err != nil {
		return err
	}
	st.spill = sp
	t0 := time.Now()
	groups := spatialGroups(pending, cfg.ReadCells, cfg.Grid)
	r.logf("read pass: %d talhões in %d spatial groups", len(pending), len(groups))
	tr := r.tr
	tr.mu.Lock()
	tr.p.Phase, tr.p.ReadTotal, tr.since = "read", len(pending), t0
	tr.mu.Unlock()
	for _, g := range groups {
		if err := r.readGroup(ctx, sp, g, sp.write, nil); err != nil {
			return err
		}
		tr.mu.Lock()
		tr.p.ReadDone += len(g)
		tr.readFrac = nil
		tr.mu.Unlock()
	}
	r.m.Record("read_pass", time.Since(t0))
	r.logf("read pass: done in %s", time.Since(t0).Round(time.Millisecond))
	return nil
}

// pending are the talhões of the batches not committed yet.
func (s *stage) pending(ctx context.Context, batches [][]grid.Field) []grid.Field {
	var pending []grid.Field
	for b, batch := range batches {
		ids := make([]string, len(batch))
		for i, f := range batch {
			ids[i] = f.ID
		}
		if _, ok := s.committed(ctx, storage.Join(s.stagingDir(b), "_SUCCESS"), ids); !ok {
			pending = append(pending, batch...)
		}
	}
	return pending
}

// readGroup reads the scenes of one group of talhões, in date ranges of
// at most Config.ReadPairs cell × scene pairs, and hands each scene read
// in full to write (the spill's, or the exchange's hand-over, which
// counts in sp). owned, when set, limits the scenes read to those it
// accepts (the exchange's read phase: the scenes this shard owns).
func (r *run) readGroup(ctx context.Context, sp *spill, fields []grid.Field, write func(series.SceneRead), owned func(*series.Item) bool) error {
	cfg, in := r.cfg, r.in
	grids, _, err := BuildGrids(ctx, fields, cfg.Grid) // failures are the batches' to report
	if err != nil {
		return err
	}
	grids = underCap(in.cat, grids, cfg)
	known, err := r.cacheKnown(ctx, grids)
	if err != nil {
		return err
	}
	known = notOwned(known, owned)
	chunks, pairs := dateChunks(in.cat, grids, cfg.From, cfg.AsOf, cfg.ReadPairs)
	done0 := sp.pairs.Load()
	r.tr.mu.Lock()
	r.tr.readGroup = len(fields)
	r.tr.readFrac = func() float64 { return float64(sp.pairs.Load()-done0) / float64(max(pairs, 1)) }
	r.tr.liveScenes = sp.scenes.Load
	r.tr.mu.Unlock()
	for _, ch := range chunks {
		if err := in.resign(ctx); err != nil {
			return nil // the batches meet the same error and report it
		}
		so := series.Options{From: ch[0], To: ch[1], Workers: cfg.Workers, Profiles: cfg.SeriesProfiles, MaxCellScenes: -1,
			IOConcurrency: cfg.IOConcurrency, SceneAttempts: cfg.SceneAttempts, SceneRetryDelay: cfg.SceneRetryDelay,
			Known: known, OnScene: write, Stream: true, Minimum: r.min, Budget: in.budget, MaxPairsInFlight: readInFlight(cfg)}
		sp.newChunk()
		_, st, err := series.Sample(ctx, in.cat, grids, so)
		if err != nil {
			return err
		}
		r.addReadStats(st, sp)
		r.noteGivenUp(st)
	}
	return nil
}

// notOwned adds to known the scenes owned does not accept (owned nil:
// known as it is).
func notOwned(known func(string, *series.Item) bool, owned func(*series.Item) bool) func(string, *series.Item) bool {
	if owned == nil {
		return known
	}
	return func(id string, it *series.Item) bool { return !owned(it) || (known != nil && known(id, it)) }
}

// readInFlight bounds the cell × scene pairs of the scenes the read pass
// reads at once by the batches' budget (--batch-cell-scenes, its default
// when only the count cuts batches). A scene in flight holds its cells'
// coordinates, values and observations until they are spilled, about
// 0.4 KB a pair at the peak against a batch's 1.1 KB or more, so the read
// pass stays under a batch's memory however dense the portfolio: without
// the bound, --io-concurrency scenes of a --read-cells group could hold
// 32 × 50,000 pairs. Measured (BenchmarkPeakRSSMixed, 600 copies of six
// large talhões over S3: 25,400 cells a scene, 813,000 pairs in flight):
// 745 MiB when the read pass ended against 1,746 MiB at the batches'
// peak; 60 copies: 428 against 1,642.
func readInFlight(cfg Config) int {
	if cfg.BatchCellScenes > 0 {
		return cfg.BatchCellScenes
	}
	return DefaultBatchCellScenes
}

// underCap leaves out the talhões whose cells × scenes exceed the run's
// cap (series.Options.MaxCellScenes): their batch refuses them unread.
func underCap(cat *series.Catalog, grids []grid.Grid, cfg Config) []grid.Grid {
	limit := cfg.MaxCellScenes
	if limit == 0 {
		limit = series.DefaultMaxCellScenes
	}
	if limit < 0 {
		return grids
	}
	kept := grids[:0:0]
	for _, g := range grids {
		if len(g.Cells)*len(cat.Select(g.Field, cfg.From, cfg.AsOf)) <= limit {
			kept = append(kept, g)
		}
	}
	return kept
}

// dateChunks cuts [from, to] into ranges of whole days, in date order,
// each holding at most maxPairs cell × scene pairs of the grids (a day
// with more is a range alone). It also returns the talhão × scene pairs
// the grids select (progress).
func dateChunks(cat *series.Catalog, grids []grid.Grid, from, to time.Time, maxPairs int) ([][2]time.Time, int) {
	pairs := map[time.Time]int{}
	n := 0
	for _, g := range grids {
		sel := cat.Select(g.Field, from, to)
		n += len(sel)
		for _, it := range sel {
			pairs[zarc.Day(it.Datetime)] += len(g.Cells)
		}
	}
	days := make([]time.Time, 0, len(pairs))
	for d := range pairs {
		days = append(days, d)
	}
	sort.Slice(days, func(i, j int) bool { return days[i].Before(days[j]) })
	var out [][2]time.Time
	acc := 0
	for _, d := range days {
		if len(out) > 0 && acc+pairs[d] <= maxPairs {
			out[len(out)-1][1] = d
			acc += pairs[d]
			continue
		}
		out = append(out, [2]time.Time{d, d})
		acc = pairs[d]
	}
	return out, n
}

// cacheKnown returns the (talhão, item) pairs the observation cache
// already holds for the grids, when the run has a cache (nil otherwise):
// the read pass leaves them to the batches, which take them from the
// cache. Partitions are loaded 64 talhões at a time and only the pairs
// kept.
func (r *run) cacheKnown(ctx context.Context, grids []grid.Grid) (func(string, *series.Item) bool, error) {
	cfg := r.cfg
	if cfg.Cache == "" {
		return nil, nil
	}
	c := cache.Open(cfg.Cache)
	set := map[[2]string]bool{}
	for i := 0; i < len(grids); i += 64 {
		part := grids[i:min(i+64, len(grids))]
		cb, err := c.Begin(ctx, part, cfg.Grid, cfg.Version, cfg.SeriesProfiles)
		if err != nil {
			return nil, err
		}
		o := cb.Options(series.Options{})
		for _, g := range part {
			for _, it := range r.in.cat.Select(g.Field, cfg.From, cfg.AsOf) {
				if o.Known(g.Field.ID, it) {
					set[[2]string{g.Field.ID, it.ID}] = true
				}
			}
		}
	}
	return func(id string, it *series.Item) bool { return set[[2]string{id, it.ID}] }, nil
}

// addReadStats records what one read of the pass cost in run.json: its
// I/O by collection, the scenes it read and the cells outside them (the
// batches serve those pairs from the spill and do not count them again).
// Skipped scenes are not recorded: the batches read them again and count
// them then.
func (r *run) addReadStats(st series.Stats, sp *spill) {
	m := r.m
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	sp.newChunk() // its scenes are counted now
	m.Counts["scenes_read"] += int64(st.ScenesRead)
	m.Counts["read_pass_scenes"] += int64(st.ScenesRead)
	m.Counts["gdal_reads"] += st.Reads
	m.Counts["gdal_read_bytes"] += st.ReadBytes
	for _, k := range []series.SkipReason{series.SkipOutsideScene, series.SkipMODISIneligibleField, series.SkipMODISIneligibleCell} {
		if v := st.Skipped[k]; v > 0 {
			m.Skipped[string(k)] += int64(v)
		}
	}
	m.IO = addIO(m.IO, st.IO)
	r.tr.p.ScenesRead += int64(st.ScenesRead)
}
