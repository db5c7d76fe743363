package series

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
	"golang.org/x/sync/errgroup"
)

// Obs is one observation of one cell on one date.
type Obs struct {
	FieldID, CellID string
	Date            time.Time // calendar day, UTC midnight (zarc.Day)
	Collection      string
	ItemID          string
	// NDVI and NDTI, −1..1; NaN means no value (see Mask). NDTI is NaN for
	// NDVI-only profiles (MOD13Q1).
	NDVI, NDTI float32
	// Red, NIR, SWIR1 and SWIR2 are the surface reflectances the indices
	// were computed from (after the profile's scale and offset); NaN when
	// the band was not read (NDVI-only profiles, no SWIR pair) or its index
	// is masked. The worker passes them to coverage (talhão soil fit) and
	// writes them to observations.parquet (red, nir, swir16, swir22).
	Red, NIR, SWIR1, SWIR2 float32
	// Mask is "" when every index the profile gives is valid. Otherwise it
	// is the reason: cloud, shadow, cirrus, snow, dark, cloud-adjacent,
	// nodata, saturated, zero-denominator. A cell outside a scene gets no
	// Obs at all (counted in Stats.Skipped as SkipOutsideScene). A reason that
	// touches only one index is prefixed with it ("ndti:zero-denominator")
	// and the other index keeps its value.
	Mask MaskReason
}

// Options configure Sample. The zero value samples every date with
// runtime.GOMAXPROCS(0) workers and the built-in profiles.
type Options struct {
	From, To time.Time // inclusive calendar days; zero leaves the side open
	// Workers bounds the scenes read at once (each with its own GDAL
	// datasets). ≤ 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Profiles maps a STAC collection id to a profile; entries override
	// the built-in ones (Profiles()), so a collection can be read with
	// another sensor's rules or with custom masks.
	Profiles map[string]*Profile
	// GDALConfig adds KEY=VALUE GDAL configuration options to every open
	// and read (after cloudConfig for cloud paths).
	GDALConfig []string
	// SceneTimeout bounds the time one scene's opens and reads may take;
	// a scene past it is skipped as unreadable (a transient failure, see
	// TransientReads) and the run goes on. 0 means DefaultSceneTimeout.
	SceneTimeout time.Duration
	// IOConcurrency bounds the scenes read at once when the assets are
	// remote (/vsis3/, /vsicurl/): a read mostly waits for the network, so
	// many are in flight while the cores decode. ≤ 0 means
	// DefaultIOConcurrency. Local assets are read Workers at a time. It
	// bounds scenes, not requests: a scene opens its files at once and
	// reads each through up to maxBandHandles handles (up to 4 requests a
	// file in flight).
	IOConcurrency int
	// SceneAttempts bounds how many times a scene whose reads fail
	// transiently is read (≤ 0: DefaultSceneAttempts): in the whole run
	// when Budget is shared by its Samples (the count is the Budget's,
	// cleared when the scene is read in full; once spent, a later Sample
	// makes one probe attempt after the backoff, RetryBudget), else in
	// this call. SceneRetryDelay is the first wait between attempts (≤ 0:
	// DefaultSceneRetryDelay). A scene still failing then is SkipTransient
	// and its talhões are in Stats.Incomplete.
	SceneAttempts   int
	SceneRetryDelay time.Duration
	// MaxCellScenes caps, per talhão, its cells × the scenes selected for
	// it: a talhão over the cap is refused before any read (Stats.Refused).
	// 0 means DefaultMaxCellScenes; a negative value removes the cap.
	MaxCellScenes int
	// Known, when set, names the (talhão, item) pairs whose observations
	// the caller already holds (an observation cache, package cache):
	// Sample reads no cell of such a pair and takes its observations from
	// Cached instead. The pairs still count as selected (Stats.Scenes,
	// Gaps), so the result is the one a run reading everything would give.
	Known func(fieldID string, it *Item) bool
	// Cached holds observations of Known pairs, as SceneRead gave them
	// (before same-date observations collapse). Only those of pairs the
	// run selects and Known accepts are used (not those of items outside
	// From..To, nor of talhões refused for their size).
	Cached []Obs
	// Budget bounds the time spent retrying reads that keep failing
	// transiently (RetryBudget); share one across the Samples of a run.
	// nil means a budget of DefaultRetryBudget for this call.
	Budget *RetryBudget
	// OnScene, when set, is called once per talhão and scene read in full
	// (never for a skipped scene, whatever the reason), after every scene
	// has been read and before observations collapse; calls are sequential.
	OnScene func(SceneRead)
	// Stream, with OnScene, reports each scene as soon as it is read and
	// keeps none of its observations: Sample then returns no observations
	// and no Gaps, only Stats, and its memory is that of the scenes in
	// flight, not of the whole read (the read pass of a run spills them).
	// Cached is not used.
	Stream bool
	// Minimum, when set, records the tiles of remote files the scenes
	// needed (see Minimum).
	Minimum *Minimum
	// MaxPairsInFlight, when positive, bounds the cell × scene pairs of
	// the scenes read at once (a scene's cells, its values and its
	// observations are held while it is read): a scene starts only when
	// the pairs in flight leave room for its cells, and one with more
	// cells than the bound is read alone. With Stream, a Sample's memory
	// is then bounded by it, not by the cells of the talhões it reads.
	MaxPairsInFlight int
}

// SceneRead is what one scene read in full gave one talhão: the raw
// observations of its cells (cells outside the scene have none), and the
// GDAL calls and pixel bytes the whole scene cost (shared by every talhão
// the scene covered).
type SceneRead struct {
	FieldID   string
	Item      *Item
	Obs       []Obs
	Reads     int64
	ReadBytes int64
}

// DefaultSceneTimeout is the default Options.SceneTimeout. Each HTTP request
// of GDAL has its own deadline too (storage.GDALConfig); this one bounds a
// scene as a whole, retries included, and also frees the worker from a
// local read that never returns.
const DefaultSceneTimeout = 10 * time.Minute

// DefaultMaxCellScenes is the default Options.MaxCellScenes: 4 million cell
// × scene pairs, about 4.4 GB at the 1.1 KB per pair measured for a whole
// run (observations, analysis, rows). A 50,000 ha talhão at 5 ha cells
// over three years of Sentinel-2 (about 1.1 million pairs) passes; a
// 987,000 ha one (21.7 million) is refused.
const DefaultMaxCellScenes = 4_000_000

// cloudConfig is the GDAL configuration Sample passes to every open and
// read of a /vsis3/ or /vsicurl/ path: no directory listing on open, a VSI
// read cache, merged and multiplexed HTTP range requests. Local files get
// only GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR (a VSI cache there only adds
// a copy).
var cloudConfig = []string{
	"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR",
	"VSI_CACHE=TRUE",
	"VSI_CACHE_SIZE=25000000",
	"GDAL_HTTP_MERGE_CONSECUTIVE_RANGES=YES",
	"GDAL_HTTP_MULTIPLEX=YES",
	"GDAL_HTTP_VERSION=2",
	"GDAL_INGESTED_BYTES_AT_OPEN=32768",
	"CPL_VSIL_CURL_ALLOWED_EXTENSIONS=.tif,.TIF,.tiff,.TIFF",
}

// Stats is the run report of Sample.
type Stats struct {
	Scenes     int // scenes (items) selected for at least one talhão
	ScenesRead int // scenes whose assets were read
	// Skipped counts skipped scenes and cells by reason (SkipMissingAsset,
	// SkipBadHref, SkipUnreadable, SkipNoCRS, SkipNoProfile,
	// SkipOutsideScene, SkipMODISIneligibleField...).
	Skipped map[SkipReason]int
	// Masked counts observations by Mask ("" = valid).
	Masked   map[MaskReason]int
	Problems []Problem
	Gaps     map[string]Gap // by field id
	// Refused holds, by field id, the talhões left unread because their
	// cells × scenes exceed Options.MaxCellScenes, with the reason.
	Refused map[string]string
	// Reads counts the GDAL calls that touched a file (opens and window
	// reads; on object stores each is at most one HTTP request, fewer when
	// GDAL's cache or range merging serves it) and ReadBytes the pixel
	// bytes those window reads returned, over the scenes read.
	Reads, ReadBytes int64
	// Incomplete holds, by field id, the scenes (item ids, sorted) the
	// talhão needed that still failed transiently after the retry budget
	// (SkipTransient). Such a talhão lacks available images: its indicators
	// must not be computed from the rest.
	Incomplete map[string][]string
	// IO accounts for the reads by collection.
	IO map[string]*IOStats
}

func (s *Stats) skip(reason SkipReason, n int) {
	if s.Skipped == nil {
		s.Skipped = map[SkipReason]int{}
	}
	s.Skipped[reason] += n
}

func registerGDAL() { storage.InitGDAL() }

type cellRef struct{ g, c int }

type sceneJob struct {
	item  *Item
	cells []cellRef
}

// Sample reads NDVI and NDTI at every cell centre of the grids from every
// catalog item that intersects the talhão in [o.From, o.To]. Work is grouped
// by scene: each asset is opened once for all cells, only blocks holding
// cells are read, and the QA asset is read first so reflectance is read
// only for clear cells. Scenes or cells that cannot be read are skipped and
// counted in Stats with their reason; they never stop the run. A cell a
// scene does not cover gets no observation, only a count. Each scene has a
// deadline (Options.SceneTimeout) and ctx reaches blocked reads (runScene);
// a talhão over Options.MaxCellScenes is refused unread (Stats.Refused).
// Same-date
// observations of one cell and collection (overlapping tiles) collapse to
// one, preferring valid values, then the smaller item id. The result is
// sorted by field, cell, date and collection. The error is non-nil only
// when ctx is cancelled.
func Sample(ctx context.Context, cat *Catalog, grids []grid.Grid, o Options) ([]Obs, Stats, error) {
	registerGDAL()
	st := Stats{Skipped: map[SkipReason]int{}, Masked: map[MaskReason]int{}, Gaps: map[string]Gap{}}
	if cat == nil {
		return nil, st, nil
	}
	jobs, refused := groupByScene(cat, grids, o.From, o.To, o.maxCellScenes())
	st.Scenes = len(jobs)
	st.Refused = refused
	toRead, known := unknown(jobs, grids, o.Known)
	net0 := storage.GDALNetStats()
	results := sampleScenes(ctx, toRead, grids, o, cat.allow)
	if err := ctx.Err(); err != nil {
		return nil, st, fmt.Errorf("sample series: %w", err)
	}
	var all []Obs
	for i, r := range results {
		all = append(all, r.obs...)
		if r.st.read {
			st.ScenesRead++
		}
		st.Reads += r.st.reads
		st.ReadBytes += r.st.bytes
		for k, v := range r.st.skipped {
			st.skip(k, v)
		}
		st.Problems = append(st.Problems, r.st.problems...)
		st.account(toRead[i], r.st, grids)
	}
	if o.OnScene != nil && !o.Stream {
		reportScenes(toRead, results, grids, o.OnScene)
	}
	if o.Stream {
		st.addNet(netByCollection(toRead, cat.allow, net0, storage.GDALNetStats()))
		return nil, st, nil
	}
	for _, ob := range o.Cached {
		if known[[2]string{ob.FieldID, ob.ItemID}] {
			all = append(all, ob)
		}
	}
	st.addNet(netByCollection(toRead, cat.allow, net0, storage.GDALNetStats()))
	all = collapse(all)
	for _, ob := range all {
		st.Masked[ob.Mask]++
	}
	st.Gaps = gaps(grids, jobs, all)
	return all, st, nil
}

// unknown returns the jobs with the cells of the Known pairs left out, and
// without the jobs left with no cell (jobs itself is not changed), and the
// selected pairs that are known, as (field id, item id).
func unknown(jobs []*sceneJob, grids []grid.Grid, known func(string, *Item) bool) (out []*sceneJob, pairs map[[2]string]bool) {
	if known == nil {
		return jobs, nil
	}
	pairs = map[[2]string]bool{}
	for _, j := range jobs {
		nj := &sceneJob{item: j.item}
		skip := map[int]bool{}
		for _, c := range j.cells {
			k, seen := skip[c.g]
			if !seen {
				k = known(grids[c.g].Field.ID, j.item)
				skip[c.g] = k
				if k {
					pairs[[2]string{grids[c.g].Field.ID, j.item.ID}] = true
				}
			}
			if !k {
				nj.cells = append(nj.cells, c)
			}
		}
		if len(nj.cells) > 0 {
			out = append(out, nj)
		}
	}
	return out, pairs
}

// reportScenes calls on for each talhão of each scene read in full, with
// the scene's raw observations of that talhão (none when every cell lay
// outside the scene), talhões in the order of grids. A skipped or
// incomplete scene is never reported, so the cache never holds it.
func reportScenes(jobs []*sceneJob, results []sceneResult, grids []grid.Grid, on func(SceneRead)) {
	for j, r := range results {
		if !r.st.read || r.st.incomplete {
			continue
		}
		var gs []int
		seen := map[int]bool{}
		for _, c := range jobs[j].cells {
			if !seen[c.g] {
				seen[c.g] = true
				gs = append(gs, c.g)
			}
		}
		by := map[string][]Obs{}
		for _, ob := range r.obs {
			by[ob.FieldID] = append(by[ob.FieldID], ob)
		}
		for _, g := range gs {
			id := grids[g].Field.ID
			on(SceneRead{FieldID: id, Item: jobs[j].item, Obs: by[id], Reads: r.st.reads, ReadBytes: r.st.bytes})
		}
	}
}

func (o Options) maxCellScenes() int {
	if o.MaxCellScenes == 0 {
		return DefaultMaxCellScenes
	}
	return o.MaxCellScenes
}

// remote says whether any asset of jobs is read through GDAL's network
// file systems.
func remote(jobs []*sceneJob, allow []hrefRule) bool {
	for _, j := range jobs {
		for _, a := range j.item.Assets {
			if p, err := gdalPath(a.Href, allow); err == nil && strings.HasPrefix(p, "/vsi") {
				return true
			}
		}
	}
	return false
}

// workers is the number of scenes read at once: IOConcurrency when any
// asset is remote, Workers otherwise.
func (o Options) workers(remote bool) int {
	if remote {
		if o.IOConcurrency > 0 {
			return o.IOConcurrency
		}
		return DefaultIOConcurrency
	}
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func (o Options) sceneAttempts() int {
	if o.SceneAttempts <= 0 {
		return DefaultSceneAttempts
	}
	return o.SceneAttempts
}

func (o Options) sceneRetryDelay() time.Duration {
	if o.SceneRetryDelay <= 0 {
		return DefaultSceneRetryDelay
	}
	return o.SceneRetryDelay
}

// account adds one scene's I/O to its collection and, when the scene is
// incomplete, names it for each talhão that needed it.
func (s *Stats) account(j *sceneJob, ss sceneStats, grids []grid.Grid) {
	if s.IO == nil {
		s.IO = map[string]*IOStats{}
	}
	c := j.item.Collection
	if s.IO[c] == nil {
		s.IO[c] = &IOStats{}
	}
	s.IO[c].add(ss.io)
	if !ss.incomplete {
		return
	}
	if s.Incomplete == nil {
		s.Incomplete = map[string][]string{}
	}
	for _, c := range j.cells {
		id := grids[c.g].Field.ID
		if l := s.Incomplete[id]; len(l) == 0 || l[len(l)-1] != j.item.ID {
			s.Incomplete[id] = append(l, j.item.ID)
		}
	}
}

// addNet adds GDAL's requests and bytes by collection, and sorts the
// incomplete scenes of each talhão.
func (s *Stats) addNet(net map[string]storage.NetStat) {
	for c, n := range net {
		if s.IO == nil {
			s.IO = map[string]*IOStats{}
		}
		if s.IO[c] == nil {
			s.IO[c] = &IOStats{}
		}
		s.IO[c].Requests += n.Requests
		s.IO[c].Bytes += n.Bytes
	}
	for id, l := range s.Incomplete {
		sort.Strings(l)
		s.Incomplete[id] = slices.Compact(l)
	}
}

func (o Options) sceneTimeout() time.Duration {
	if o.SceneTimeout <= 0 {
		return DefaultSceneTimeout
	}
	return o.SceneTimeout
}

// groupByScene turns the items each talhão selects into one job per scene
// holding every cell it covers, in the order the talhões select them. A
// talhão whose cells × scenes exceed limit (when limit > 0) is left out and
// returned in refused with the reason.
func groupByScene(cat *Catalog, grids []grid.Grid, from, to time.Time, limit int) (jobs []*sceneJob, refused map[string]string) {
	jobIdx := map[*Item]int{}
	for gi := range grids {
		g := &grids[gi]
		sel := cat.Select(g.Field, from, to)
		if n := len(g.Cells) * len(sel); limit > 0 && n > limit {
			if refused == nil {
				refused = map[string]string{}
			}
			refused[g.Field.ID] = fmt.Sprintf("talhão too large for the memory budget: %d cells × %d scenes = %d cell-scene pairs, over the cap of %d (series.Options.MaxCellScenes); split it or raise the cap", len(g.Cells), len(sel), n, limit)
			continue
		}
		for _, it := range sel {
			j, ok := jobIdx[it]
			if !ok {
				j = len(jobs)
				jobIdx[it] = j
				jobs = append(jobs, &sceneJob{item: it})
			}
			for ci := range g.Cells {
				jobs[j].cells = append(jobs[j].cells, cellRef{gi, ci})
			}
		}
	}
	return jobs, refused
}

// sceneResult is what one scene gave.
type sceneResult struct {
	obs []Obs
	st  sceneStats
}

// sampleScenes reads the scenes, at most o.Workers at once, and returns
// their results in the order of jobs. Each running scene holds one reader
// (buffers and PROJ transforms are not shared). Once ctx is cancelled no
// further scene starts.
func sampleScenes(ctx context.Context, jobs []*sceneJob, grids []grid.Grid, o Options, allow []hrefRule) []sceneResult {
	profiles := Profiles()
	for k, p := range o.Profiles {
		profiles[k] = p
	}
	rem := remote(jobs, allow)
	workers := o.workers(rem)
	// Local reads decode each block once: GDAL's cache need only hold a
	// few blocks per scene in flight. Remote bands are read in one window
	// of several blocks, copied a line at a time from the cache, so there
	// GDAL's default stays (docs/performance.md).
	if rem {
		storage.SizeBlockCache(0)
	} else {
		storage.SizeBlockCache(int64(workers) * storage.BlockCachePerScene)
	}
	cfg := append(append([]string{}, cloudConfig...), o.GDALConfig...)
	localCfg := append([]string{"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR"}, o.GDALConfig...)
	wkts := newWKTCache()
	free := make(chan *reader, workers)
	for range workers {
		free <- &reader{cloudCfg: cfg, localCfg: localCfg, allow: allow, min: o.Minimum, wkts: wkts}
	}
	results := make([]sceneResult, len(jobs))
	var streamMu sync.Mutex
	th := newThrottle(workers)
	budget := o.Budget
	if budget == nil {
		budget = NewRetryBudget(0)
	}
	var g errgroup.Group
	g.SetLimit(workers)
	gate := newPairGate(o.MaxPairsInFlight)
	for j, job := range jobs {
		if ctx.Err() != nil || gate.acquire(ctx, len(job.cells)) != nil {
			break
		}
		g.Go(func() error {
			defer gate.release(len(job.cells))
			results[j] = retryScene(ctx, o.sceneAttempts(), o.sceneRetryDelay(), budget, job.item, func(actx context.Context, extra []string, onRetry func(string)) (res sceneResult) {
				th.acquire()
				defer func() { th.release(throttled(res.st)) }()
				r := <-free
				r.extra, r.onRetry = extra, onRetry
				res, abandoned := runScene(actx, o.sceneTimeout(), job.item, func(sctx context.Context) sceneResult {
					obs, ss := r.scene(sctx, job, grids, profiles)
					return sceneResult{obs, ss}
				})
				if abandoned {
					// r stays with the blocked read until GDAL returns;
					// this worker goes on with a fresh reader.
					r = &reader{cloudCfg: cfg, localCfg: localCfg, allow: allow, min: o.Minimum, wkts: wkts}
				}
				free <- r
				return res
			})
			if o.Stream && o.OnScene != nil {
				streamMu.Lock()
				reportScenes(jobs[j:j+1], results[j:j+1], grids, o.OnScene)
				streamMu.Unlock()
				results[j].obs = nil
			}
			return nil
		})
	}
	_ = g.Wait() // the scenes return no error: problems are in their stats
	return results
}

// obsRank orders same-date candidates: more valid indices first.
func obsRank(o Obs) int {
	r := 0
	if !math.IsNaN(float64(o.NDVI)) {
		r += 2
	}
	if !math.IsNaN(float64(o.NDTI)) {
		r++
	}
	return r
}

func collapse(all []Obs) []Obs {
	sort.Slice(all, func(i, j int) bool {
		a, b := &all[i], &all[j]
		if a.FieldID != b.FieldID {
			return a.FieldID < b.FieldID
		}
		if a.CellID != b.CellID {
			return a.CellID < b.CellID
		}
		if !a.Date.Equal(b.Date) {
			return a.Date.Before(b.Date)
		}
		if a.Collection != b.Collection {
			return a.Collection < b.Collection
		}
		if ra, rb := obsRank(*a), obsRank(*b); ra != rb {
			return ra > rb
		}
		if (a.Mask == "") != (b.Mask == "") {
			return a.Mask == ""
		}
		return a.ItemID < b.ItemID
	})
	out := all[:0]
	for i, ob := range all {
		if i > 0 {
			p := &out[len(out)-1]
			if p.FieldID == ob.FieldID && p.CellID == ob.CellID && p.Date.Equal(ob.Date) && p.Collection == ob.Collection {
				continue
			}
		}
		out = append(out, ob)
	}
	return out
}
