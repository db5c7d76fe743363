package series

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/zarc"
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
	// DefaultIOConcurrency. Local assets are read Workers at a time.
	IOConcurrency int
	// SceneAttempts bounds how many times a scene whose reads fail
	// transiently is read (≤ 0: DefaultSceneAttempts); SceneRetryDelay is
	// the first wait between attempts (≤ 0: DefaultSceneRetryDelay). A scene
	// still failing then is SkipTransient and its talhões are in
	// Stats.Incomplete.
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

// Gap is the temporal check of IN 6.5 for one talhão.
type Gap struct {
	Scenes      int `json:"scenes"`       // distinct scene dates selected for the talhão
	UsableDates int `json:"usable_dates"` // dates with at least one cell with a valid NDVI
	// LargestGapDays is the largest number of days between consecutive
	// usable dates (0 with fewer than two); GapFrom/GapTo bound it.
	LargestGapDays int       `json:"largest_gap_days"`
	GapFrom        time.Time `json:"gap_from"`
	GapTo          time.Time `json:"gap_to"`
	// RevisitDays is the median interval between consecutive scene dates,
	// clouds or not: the archive's revisit.
	RevisitDays float64 `json:"revisit_days"`
	// Coarse is true when RevisitDays is over 16 (IN 6.5 asks for a
	// temporal resolution of at least 16 days) or fewer than two scenes
	// were found.
	Coarse bool `json:"coarse"`
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
	free := make(chan *reader, workers)
	for range workers {
		free <- &reader{cloudCfg: cfg, localCfg: localCfg, allow: allow, min: o.Minimum}
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
	for j, job := range jobs {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			results[j] = retryScene(ctx, o.sceneAttempts(), o.sceneRetryDelay(), budget, job.item, func(actx context.Context, extra []string, onRetry func(string)) (res sceneResult) {
				th.acquire()
				defer func() { th.release(throttled(res.st)) }()
				r := <-free
				r.extra, r.onRetry = extra, onRetry
				res, abandoned := runScene(actx, o.sceneTimeout(), job.item, func(sctx context.Context) sceneResult {
					obs, ss := r.scene(sctx, job, grids, profiles)
					return sceneResult{obs, ss}
				}, r.close)
				if abandoned {
					// r stays with the blocked read, which closes it when
					// GDAL returns; this worker goes on with a fresh reader.
					r = &reader{cloudCfg: cfg, localCfg: localCfg, allow: allow, min: o.Minimum}
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
	close(free)
	for r := range free {
		r.close()
	}
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

func gaps(grids []grid.Grid, jobs []*sceneJob, all []Obs) map[string]Gap {
	sceneDates := map[string]map[time.Time]bool{}
	for _, j := range jobs {
		d := zarc.Day(j.item.Datetime)
		seen := map[int]bool{}
		for _, c := range j.cells {
			if seen[c.g] {
				continue
			}
			seen[c.g] = true
			id := grids[c.g].Field.ID
			if sceneDates[id] == nil {
				sceneDates[id] = map[time.Time]bool{}
			}
			sceneDates[id][d] = true
		}
	}
	usable := map[string]map[time.Time]bool{}
	for _, ob := range all {
		if math.IsNaN(float64(ob.NDVI)) {
			continue
		}
		if usable[ob.FieldID] == nil {
			usable[ob.FieldID] = map[time.Time]bool{}
		}
		usable[ob.FieldID][ob.Date] = true
	}
	out := map[string]Gap{}
	for _, g := range grids {
		id := g.Field.ID
		out[id] = gapOf(sortedDates(sceneDates[id]), sortedDates(usable[id]))
	}
	return out
}

// gapOf is the IN 6.5 check of a talhão from the dates of the scenes
// selected for it (sd) and those with a valid NDVI (ud), both sorted.
func gapOf(sd, ud []time.Time) Gap {
	gp := Gap{Scenes: len(sd), UsableDates: len(ud)}
	for i := 1; i < len(ud); i++ {
		d := int(ud[i].Sub(ud[i-1]).Hours()/24 + 0.5)
		if d > gp.LargestGapDays {
			gp.LargestGapDays, gp.GapFrom, gp.GapTo = d, ud[i-1], ud[i]
		}
	}
	if len(sd) >= 2 {
		iv := make([]float64, 0, len(sd)-1)
		for i := 1; i < len(sd); i++ {
			iv = append(iv, sd[i].Sub(sd[i-1]).Hours()/24)
		}
		sort.Float64s(iv)
		n := len(iv)
		if n%2 == 1 {
			gp.RevisitDays = iv[n/2]
		} else {
			gp.RevisitDays = (iv[n/2-1] + iv[n/2]) / 2
		}
	}
	gp.Coarse = len(sd) < 2 || gp.RevisitDays > 16
	return gp
}

func sortedDates(m map[time.Time]bool) []time.Time {
	out := make([]time.Time, 0, len(m))
	for d := range m {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

type sceneStats struct {
	read     bool
	skipped  map[SkipReason]int
	problems []Problem
	// reads and bytes count the scene's GDAL opens and window reads and
	// the pixel bytes read (Stats.Reads).
	reads, bytes int64
	// incomplete: the scene still failed transiently after its attempts.
	incomplete bool
	io         IOStats
}

func (s *sceneStats) skip(it *Item, asset string, reason SkipReason, n int, err error) {
	s.count(reason, n)
	p := Problem{Item: it.ID, Asset: asset, Reason: reason}
	if err != nil {
		p.Detail = redactSigned(err.Error())
	}
	s.problems = append(s.problems, p)
}

func (s *sceneStats) count(reason SkipReason, n int) {
	if s.skipped == nil {
		s.skipped = map[SkipReason]int{}
	}
	s.skipped[reason] += n
}

// reader holds one goroutine's buffers.
type reader struct {
	// GDAL options for /vsis3/ and /vsicurl/ paths, and for local files
	// (where a VSI cache would only add a copy).
	cloudCfg, localCfg []string
	allow              []hrefRule
	// extra are GDAL options of this attempt only (retryScene); log
	// records the attempt's GDAL retries and read time.
	extra []string
	log   *ioLog
	buf   []float64
	u8    []uint8
	u16   []uint16
	i16   []int16
	f32   []float32
	// reads and bytes count GDAL opens and window reads, and pixel bytes
	// read, since the reader was made (sceneStats.reads).
	reads, bytes int64
	// min records the tiles remote reads need (Options.Minimum); nil
	// records nothing.
	min *Minimum
	// collection is that of the scene being read (for min).
	collection string
	// onRetry is told of each retry GDAL announces in the attempt (the
	// run's retry budget, retryScene).
	onRetry func(msg string)
}

// close releases the reader (its transforms live in trPool).
func (r *reader) close() {}

// cpuSlots bounds the CPU work of the scenes in flight that runs in Go or
// PROJ (projecting cells, building transforms) to the cores, however many
// scenes wait for the network (Options.IOConcurrency).
var cpuSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// putTransform hands a transform back to the pool.
func putTransform(wkt string, t *godal.Transform) {
	trPool.Lock()
	defer trPool.Unlock()
	trPool.free[wkt] = append(trPool.free[wkt], t)
}

// trPool keeps PROJ transforms from WGS84 between Sample calls, by target
// CRS WKT (at most one per concurrent toCRS call and CRS ever built):
// building one costs 10–250 ms, far more than a small scene's reads. A
// godal.Transform is not safe for concurrent use, so each is held by one
// call at a time.
var trPool = struct {
	sync.Mutex
	free map[string][]*godal.Transform
}{free: map[string][]*godal.Transform{}}

func takeTransform(wkt string) *godal.Transform {
	trPool.Lock()
	defer trPool.Unlock()
	l := trPool.free[wkt]
	if len(l) == 0 {
		return nil
	}
	t := l[len(l)-1]
	trPool.free[wkt] = l[:len(l)-1]
	return t
}

// openDS is one opened file of a scene.
type openDS struct {
	ds     *godal.Dataset
	cfg    []string // GDAL options for its reads
	wkt    string
	inv    [6]float64 // inverse geotransform
	sx, sy int
}

// role is one band of a profile resolved for an item.
type role struct {
	name  string // "qa", "red", "nir", "swir1", "swir2", "ndvi"
	key   string // asset key
	asset Asset
	path  string
	rad   Radiometry
	ds    *openDS
	col   []int // per cell; -1 outside
	row   []int
	val   []float64
	band  godal.Band
	nd    float64 // the file's nodata for this band, when hasND
	hasND bool
}

func firstKey(it *Item, keys []string) (string, Asset, bool) {
	for _, k := range keys {
		if a, ok := it.Assets[k]; ok {
			return k, a, true
		}
	}
	return "", Asset{}, false
}

// sceneSkip is why a whole scene is skipped, and the asset at fault.
type sceneSkip struct {
	asset  string
	reason SkipReason
	err    error
}

// scene samples one scene at its cells: it resolves the profile's assets,
// reads the mask and then the bands at the clear cells, and computes the
// indices.
func (r *reader) scene(ctx context.Context, job *sceneJob, grids []grid.Grid, profiles map[string]*Profile) ([]Obs, sceneStats) {
	var ss sceneStats
	r0, b0 := r.reads, r.bytes
	r.collection = job.item.Collection
	log := &ioLog{onRetry: r.onRetry}
	r.log = log
	t0 := time.Now()
	obs := r.sceneObs(ctx, job, grids, profiles, &ss)
	read := time.Duration(log.readNano.Load())
	ss.io.ReadSeconds = read.Seconds()
	ss.io.ComputeSeconds = max(time.Since(t0)-read, 0).Seconds()
	log.mu.Lock()
	ss.io.Retries = log.retries
	log.mu.Unlock()
	ss.reads, ss.bytes = r.reads-r0, r.bytes-b0
	return obs, ss
}

// sceneObs is scene without the accounting.
func (r *reader) sceneObs(ctx context.Context, job *sceneJob, grids []grid.Grid, profiles map[string]*Profile, ss *sceneStats) []Obs {
	it := job.item
	if ctx.Err() != nil {
		return nil
	}
	p := profiles[it.Collection]
	if p == nil {
		ss.skip(it, "", SkipNoProfile, 1, fmt.Errorf("collection %q has no sensor profile", it.Collection))
		return nil
	}
	cells := job.cells
	if p.MODIS {
		if cells = modisCells(cells, grids, ss); len(cells) == 0 {
			return nil
		}
	}
	roles, qa, skip := resolveRoles(it, p, r.allow)
	if skip == nil {
		lon, lat := cellCentres(cells, grids)
		var mask []MaskReason
		mask, skip = r.read(ctx, p, roles, qa, lon, lat)
		if skip == nil {
			ss.read = true
			obs := indices(it, p, roles, mask, cells, grids, ss)
			if qa == nil && len(p.QA) > 0 {
				flagNoQA(obs)
			}
			return obs
		}
	}
	ss.skip(it, skip.asset, skip.reason, 1, skip.err)
	// An asset whose token endpoint kept failing: its talhões are
	// incomplete (the access rules are applied again before each batch).
	if skip.reason == SkipTransient {
		ss.incomplete = true
	}
	return nil
}

// flagNoQA flags the valid observations of a scene read without its QA
// asset (FlaggedNoQA).
func flagNoQA(obs []Obs) {
	for i := range obs {
		if obs[i].Mask == "" {
			obs[i].Mask = FlaggedNoQA
		}
	}
}

// modisCells keeps the cells a MODIS scene may sample (IN 6.4 I) and counts
// the others.
func modisCells(cells []cellRef, grids []grid.Grid, ss *sceneStats) []cellRef {
	kept := cells[:0:0]
	for _, c := range cells {
		g := &grids[c.g]
		switch {
		case !g.MODISEligible:
			ss.count(SkipMODISIneligibleField, 1)
		case !g.Cells[c.c].MODIS:
			ss.count(SkipMODISIneligibleCell, 1)
		default:
			kept = append(kept, c)
		}
	}
	return kept
}

// cellCentres returns the lon/lat centres of the cells.
func cellCentres(cells []cellRef, grids []grid.Grid) (lon, lat []float64) {
	lon = make([]float64, len(cells))
	lat = make([]float64, len(cells))
	for i, c := range cells {
		pt := grids[c.g].Cells[c.c].Centre
		lon[i], lat[i] = pt[0], pt[1]
	}
	return lon, lat
}

// want is a role of a profile and the asset keys that may hold it.
type want struct {
	name string
	keys []string
}

// profileWants lists the roles a profile reads, QA first.
func profileWants(p *Profile) []want {
	var wants []want
	if len(p.QA) > 0 {
		wants = append(wants, want{"qa", p.QA})
	}
	if len(p.NDVI) > 0 {
		return append(wants, want{"ndvi", p.NDVI})
	}
	wants = append(wants, want{"red", p.Red}, want{"nir", p.NIR})
	if len(p.SWIR1) > 0 {
		wants = append(wants, want{"swir1", p.SWIR1}, want{"swir2", p.SWIR2})
	}
	return wants
}

// resolveRoles finds the asset of each role of the profile in the item and
// the path GDAL opens it by. qa is nil when the profile has no QA asset or
// an optional one the item lacks.
func resolveRoles(it *Item, p *Profile, allow []hrefRule) (roles []*role, qa *role, skip *sceneSkip) {
	for _, w := range profileWants(p) {
		k, a, ok := firstKey(it, w.keys)
		if !ok {
			if w.name == "qa" && p.QAOptional {
				continue
			}
			return nil, nil, &sceneSkip{strings.Join(w.keys, "|"), SkipMissingAsset, fmt.Errorf("no %s asset (keys %v)", w.name, w.keys)}
		}
		path, err := gdalPath(a.Href, allow)
		if err != nil {
			return nil, nil, &sceneSkip{k, SkipBadHref, err}
		}
		if e := a.AccessErr; e != nil {
			return nil, nil, &sceneSkip{k, map[bool]SkipReason{false: SkipAccess, true: SkipTransient}[e.Transient], e}
		}
		ro := &role{name: w.name, key: k, asset: a, path: path, rad: AssetRadiometry(p, it, a)}
		if err := ro.rad.Check(p); err != nil {
			return nil, nil, &sceneSkip{k, SkipBadScaling, err}
		}
		roles = append(roles, ro)
		if w.name == "qa" {
			qa = ro
		}
	}
	return roles, qa, nil
}

// read opens the roles' files (each once), places the cells in each
// file's pixel space and reads the mask, then the other bands at the cells
// the mask leaves clear. It returns the mask reason of each cell ("" when
// clear).
func (r *reader) read(ctx context.Context, p *Profile, roles []*role, qa *role, lon, lat []float64) ([]MaskReason, *sceneSkip) {
	files := map[string]*openDS{}
	defer func() {
		for _, f := range files {
			f.ds.Close()
		}
	}()
	if skip := r.openRoles(roles, files); skip != nil {
		return nil, skip
	}
	if skip := r.locate(roles, lon, lat); skip != nil {
		return nil, skip
	}
	mask := outsideScene(roles, len(lon))
	if qa != nil {
		idx := pending(mask)
		if err := r.readPixels(ctx, qa, idx); err != nil {
			return nil, &sceneSkip{qa.key, readReason(ctx), err}
		}
		for _, i := range idx {
			mask[i] = p.maskReason(qa.val[i])
		}
	}
	idx := pending(mask)
	if len(idx) == 0 {
		return mask, nil
	}
	var rest []*role
	for _, ro := range roles {
		if ro != qa {
			rest = append(rest, ro)
		}
	}
	if skip := r.readRoles(ctx, rest, idx); skip != nil {
		return nil, skip
	}
	return mask, nil
}

// readRoles reads the roles at the cells idx. Remote files are read all at
// once (one goroutine and buffer per file, the roles of one file in turn:
// a GDAL dataset is not safe for concurrent use); local ones in turn.
func (r *reader) readRoles(ctx context.Context, roles []*role, idx []int) *sceneSkip {
	byFile := map[*openDS][]*role{}
	var order []*openDS
	for _, ro := range roles {
		if _, ok := byFile[ro.ds]; !ok {
			order = append(order, ro.ds)
		}
		byFile[ro.ds] = append(byFile[ro.ds], ro)
	}
	if len(order) < 2 || !strings.HasPrefix(roles[0].path, "/vsi") {
		for _, ro := range roles {
			if err := r.readPixels(ctx, ro, idx); err != nil {
				return &sceneSkip{ro.key, readReason(ctx), err}
			}
		}
		return nil
	}
	skips := make([]*sceneSkip, len(order))
	subs := make([]*reader, len(order))
	var wg sync.WaitGroup
	for i, f := range order {
		subs[i] = &reader{log: r.log, min: r.min, collection: r.collection} // its own buffers and counts
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub := subs[i]
			for _, ro := range byFile[f] {
				if err := sub.readPixels(ctx, ro, idx); err != nil {
					skips[i] = &sceneSkip{ro.key, readReason(ctx), err}
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, sub := range subs {
		r.reads, r.bytes = r.reads+sub.reads, r.bytes+sub.bytes
	}
	for _, sk := range skips {
		if sk != nil {
			return sk
		}
	}
	return nil
}

// openRoles opens each role's file once (files holds those already open)
// and picks its band.
func (r *reader) openRoles(roles []*role, files map[string]*openDS) *sceneSkip {
	if skip := r.openRemote(roles, files); skip != nil {
		return skip
	}
	for _, ro := range roles {
		if f, ok := files[ro.path]; ok {
			ro.ds = f
		} else {
			r.reads++
			f, reason, err := r.open(ro.path, ro.asset.GDALConfig...)
			if err != nil {
				return &sceneSkip{ro.key, reason, err}
			}
			files[ro.path] = f
			ro.ds = f
		}
		if ro.asset.Band > len(ro.ds.ds.Bands()) {
			return &sceneSkip{ro.key, SkipMissingBand, fmt.Errorf("%s has %d bands, asset wants band %d", ro.asset.Href, len(ro.ds.ds.Bands()), ro.asset.Band)}
		}
		ro.band = ro.ds.ds.Bands()[ro.asset.Band-1]
		ro.nd, ro.hasND = ro.band.NoData()
	}
	return nil
}

// openRemote opens the roles' remote files (/vsis3/, /vsicurl/) all at
// once, adding them to files: each open waits for the network, so a scene
// pays one round of opens instead of one per file. Local files are left to
// openRoles (opened one after the other, as fast as the disk allows).
func (r *reader) openRemote(roles []*role, files map[string]*openDS) *sceneSkip {
	var paths []string
	key := map[string]*role{}
	for _, ro := range roles {
		if _, ok := key[ro.path]; !ok && strings.HasPrefix(ro.path, "/vsi") {
			key[ro.path] = ro
			paths = append(paths, ro.path)
		}
	}
	if len(paths) < 2 {
		return nil
	}
	type opened struct {
		f      *openDS
		reason SkipReason
		err    error
	}
	res := make([]opened, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, reason, err := r.open(p, key[p].asset.GDALConfig...)
			res[i] = opened{f, reason, err}
		}()
	}
	wg.Wait()
	r.reads += int64(len(paths))
	var skip *sceneSkip
	for i, o := range res {
		if o.err == nil {
			files[paths[i]] = o.f // closed by read, with the others
		} else if skip == nil {
			skip = &sceneSkip{key[paths[i]].key, o.reason, o.err}
		}
	}
	return skip
}

// locate places the cell centres in each role's pixel space (one
// transform per CRS); a cell outside the raster gets column and row -1.
func (r *reader) locate(roles []*role, lon, lat []float64) *sceneSkip {
	proj := map[string][2][]float64{}
	for _, ro := range roles {
		xy, ok := proj[ro.ds.wkt]
		if !ok {
			x, y, err := r.toCRS(ro.ds.wkt, lon, lat)
			if err != nil {
				return &sceneSkip{ro.key, SkipNoCRS, err}
			}
			xy = [2][]float64{x, y}
			proj[ro.ds.wkt] = xy
		}
		n := len(lon)
		ro.col, ro.row, ro.val = make([]int, n), make([]int, n), make([]float64, n)
		for i := range n {
			ro.col[i], ro.row[i] = ro.ds.pixel(xy[0][i], xy[1][i])
			ro.val[i] = math.NaN()
		}
	}
	return nil
}

// pixel returns the column and row of the point (x, y) in the file's CRS,
// or -1, -1 when it lies outside the raster.
func (f *openDS) pixel(x, y float64) (int, int) {
	inv := &f.inv
	fc := inv[0] + inv[1]*x + inv[2]*y
	fr := inv[3] + inv[4]*x + inv[5]*y
	c, r := int(math.Floor(fc)), int(math.Floor(fr))
	if math.IsNaN(fc) || math.IsNaN(fr) || c < 0 || r < 0 || c >= f.sx || r >= f.sy {
		return -1, -1
	}
	return c, r
}

// outsideScene masks the cells that lie outside any role's raster.
func outsideScene(roles []*role, n int) []MaskReason {
	mask := make([]MaskReason, n)
	for i := range mask {
		for _, ro := range roles {
			if ro.col[i] < 0 {
				mask[i] = MaskedOutsideScene
				break
			}
		}
	}
	return mask
}

// indices computes the observation of each cell the scene covers from the
// bands read; cells outside the scene get no observation and are counted
// (SkipOutsideScene).
func indices(it *Item, p *Profile, roles []*role, mask []MaskReason, cells []cellRef, grids []grid.Grid, ss *sceneStats) []Obs {
	date := zarc.Day(it.Datetime)
	obs := make([]Obs, 0, len(cells))
	nan := float32(math.NaN())
	for i, c := range cells {
		if mask[i] == MaskedOutsideScene {
			// No row: a scene that does not cover a cell says nothing
			// about it, and large talhões would hold mostly such rows.
			ss.count(SkipOutsideScene, 1)
			continue
		}
		cell := &grids[c.g].Cells[c.c]
		ob := Obs{FieldID: grids[c.g].Field.ID, CellID: cell.ID, Date: date, Collection: it.Collection, ItemID: it.ID, NDVI: nan, NDTI: nan, Red: nan, NIR: nan, SWIR1: nan, SWIR2: nan, Mask: mask[i]}
		if ob.Mask == "" {
			compute(p, roles, i, &ob)
		}
		obs = append(obs, ob)
	}
	return obs
}

// readReason is the skip reason of a failed read: cancelled when the run
// was, unreadable otherwise (a scene deadline included: TransientReads
// counts that one as transient).
func readReason(ctx context.Context) SkipReason {
	if errors.Is(ctx.Err(), context.Canceled) {
		return SkipCancelled
	}
	return SkipUnreadable
}

func pending(mask []MaskReason) []int {
	var idx []int
	for i, m := range mask {
		if m == "" {
			idx = append(idx, i)
		}
	}
	return idx
}

// value turns a DN into a physical value, or returns a reason.
func (ro *role) value(p *Profile, i int) (float64, MaskReason) {
	v := ro.val[i]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, MaskedNodata
	}
	for _, n := range p.Nodata {
		if v == n {
			return 0, MaskedNodata
		}
	}
	if ro.asset.Nodata != nil && v == *ro.asset.Nodata {
		return 0, MaskedNodata
	}
	if ro.hasND && v == ro.nd {
		return 0, MaskedNodata
	}
	if p.ValidMax > p.ValidMin && (v < p.ValidMin || v > p.ValidMax) {
		return 0, MaskedNodata
	}
	if p.SaturatedMin != 0 && v >= p.SaturatedMin {
		return 0, MaskedSaturated
	}
	return v*ro.rad.Scale + ro.rad.Offset, ""
}

// noSWIR stands for the NDTI reason of a profile without a SWIR pair.
const noSWIR MaskReason = "none"

// compute sets the indices, reflectances and mask of ob from the bands
// read at cell i.
func compute(p *Profile, roles []*role, i int, ob *Obs) {
	get := func(name string) *role {
		for _, ro := range roles {
			if ro.name == name {
				return ro
			}
		}
		return nil
	}
	if nd := get("ndvi"); nd != nil {
		v, why := nd.value(p, i)
		if why != "" {
			ob.Mask = why
			return
		}
		ob.NDVI = float32(v)
		return
	}
	nd, why1 := normDiff(p, get("nir"), get("red"), i)
	var nt float64
	why2 := noSWIR
	if s1, s2 := get("swir1"), get("swir2"); s1 != nil && s2 != nil {
		nt, why2 = normDiff(p, s1, s2, i)
	}
	if why1 == "" {
		ob.NDVI = float32(nd)
		ob.Red, ob.NIR = reflectance(p, get("red"), i), reflectance(p, get("nir"), i)
	}
	if why2 == "" {
		ob.NDTI = float32(nt)
		ob.SWIR1, ob.SWIR2 = reflectance(p, get("swir1"), i), reflectance(p, get("swir2"), i)
	}
	switch {
	case why1 == "" && (why2 == "" || why2 == noSWIR):
	case why1 == "":
		ob.Mask = why2.only("ndti")
	case why2 == noSWIR:
		ob.Mask = why1
	case why2 == "":
		ob.Mask = why1.only("ndvi")
	case why1 == MaskedZeroDenominator:
		ob.Mask = why2
	default:
		ob.Mask = why1
	}
}

// reflectance returns the physical value of ro at cell i, NaN when it has
// none (normDiff has already accepted it).
func reflectance(p *Profile, ro *role, i int) float32 {
	v, why := ro.value(p, i)
	if why != "" {
		return float32(math.NaN())
	}
	return float32(v)
}

// normDiff returns (a−b)/(a+b) of the reflectances, or a reason.
func normDiff(p *Profile, ra, rb *role, i int) (float64, MaskReason) {
	a, why := ra.value(p, i)
	if why != "" {
		return 0, why
	}
	b, why := rb.value(p, i)
	if why != "" {
		return 0, why
	}
	den := a + b
	if !(den > 0) {
		return 0, MaskedZeroDenominator
	}
	return (a - b) / den, ""
}

// openDrivers are the only GDAL drivers an asset is opened with: a
// Cloud-Optimized GeoTIFF is read by GTiff. A VRT, or any other format that
// names further files or URLs, is not opened at all, so a catalog cannot
// make GDAL fetch what such a file names (docs/security.md).
var openDrivers = []string{"GTiff"}

func (r *reader) open(path string, extra ...string) (*openDS, SkipReason, error) {
	cfg := r.localCfg
	if strings.HasPrefix(path, "/vsi") {
		cfg = append(append([]string{}, r.cloudCfg...), r.extra...)
	}
	if len(extra) > 0 {
		cfg = append(append([]string{}, cfg...), extra...)
	}
	var ds *godal.Dataset
	err := r.log.timed(func() (err error) {
		ds, err = godal.Open(path, godal.RasterOnly(), godal.Drivers(openDrivers...), godal.ConfigOption(cfg...), godal.ErrLogger(r.log.handler))
		return err
	})
	if err != nil {
		return nil, SkipUnreadable, fmt.Errorf("open %s: %w", path, err)
	}
	if d := ds.Driver().ShortName(); !slices.Contains(openDrivers, d) {
		ds.Close()
		return nil, SkipBadHref, fmt.Errorf("open %s: driver %s is not accepted for catalog assets: %w", path, d, errBadHref)
	}
	f := &openDS{ds: ds, wkt: ds.Projection(), cfg: cfg}
	if f.wkt == "" {
		ds.Close()
		return nil, SkipNoCRS, fmt.Errorf("open %s: raster has no CRS", path)
	}
	gt, err := ds.GeoTransform()
	if err != nil {
		ds.Close()
		return nil, SkipNoCRS, fmt.Errorf("open %s: no geotransform: %w", path, err)
	}
	det := gt[1]*gt[5] - gt[2]*gt[4]
	if det == 0 {
		ds.Close()
		return nil, SkipNoCRS, fmt.Errorf("open %s: singular geotransform %v", path, gt)
	}
	// Inverse of x = gt0 + c*gt1 + r*gt2, y = gt3 + c*gt4 + r*gt5.
	f.inv = [6]float64{
		(gt[2]*gt[3] - gt[0]*gt[5]) / det, gt[5] / det, -gt[2] / det,
		(-gt[1]*gt[3] + gt[0]*gt[4]) / det, -gt[4] / det, gt[1] / det,
	}
	s := ds.Structure()
	f.sx, f.sy = s.SizeX, s.SizeY
	return f, "", nil
}

var (
	wgs84Once sync.Once
	wgs84     *godal.SpatialRef
	wgs84Err  error
)

// toCRS transforms lon/lat points to the CRS given as WKT.
func (r *reader) toCRS(wkt string, lon, lat []float64) ([]float64, []float64, error) {
	wgs84Once.Do(func() { wgs84, wgs84Err = godal.NewSpatialRefFromEPSG(4326) })
	if wgs84Err != nil {
		return nil, nil, fmt.Errorf("create WGS84: %w", wgs84Err)
	}
	// A transform is held for this call only, so the pool holds about as
	// many as calls run at once (the cores), not one per scene in flight.
	cpuSlots <- struct{}{}
	defer func() { <-cpuSlots }()
	tr := takeTransform(wkt)
	if tr == nil {
		dst, err := godal.NewSpatialRefFromWKT(wkt)
		if err != nil {
			return nil, nil, fmt.Errorf("parse raster CRS: %w", err)
		}
		tr, err = godal.NewTransform(wgs84, dst)
		dst.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("transform to raster CRS: %w", err)
		}
	}
	defer putTransform(wkt, tr)
	x := append([]float64(nil), lon...)
	y := append([]float64(nil), lat...)
	if len(x) == 0 {
		return x, y, nil
	}
	ok2 := make([]bool, len(x))
	// Per-point failures are flagged in ok2; the error only says some failed.
	_ = tr.TransformEx(x, y, nil, ok2)
	for i := range ok2 {
		if !ok2[i] {
			x[i], y[i] = math.NaN(), math.NaN()
		}
	}
	return x, y, nil
}

// readPixels reads ro's band at the pixels of cells idx into ro.val. It
// reads one window when that decodes no more blocks than block-by-block
// reading and is no larger than a block, else the sub-window of each block
// that holds cells.
func (r *reader) readPixels(ctx context.Context, ro *role, idx []int) error {
	if len(idx) == 0 {
		return nil
	}
	band := ro.band
	bs := band.Structure()
	bw, bh := bs.BlockSizeX, bs.BlockSizeY
	if bw <= 0 || bh <= 0 {
		bw, bh = bs.SizeX, 1
	}
	type win struct{ x0, y0, x1, y1 int }
	blocks := map[[2]int]*win{}
	var order [][2]int
	all := win{math.MaxInt, math.MaxInt, -1, -1}
	for _, i := range idx {
		c, rr := ro.col[i], ro.row[i]
		k := [2]int{c / bw, rr / bh}
		w, ok := blocks[k]
		if !ok {
			w = &win{c, rr, c, rr}
			blocks[k] = w
			order = append(order, k)
		}
		w.x0, w.y0, w.x1, w.y1 = min(w.x0, c), min(w.y0, rr), max(w.x1, c), max(w.y1, rr)
		all.x0, all.y0, all.x1, all.y1 = min(all.x0, c), min(all.y0, rr), max(all.x1, c), max(all.y1, rr)
	}
	if r.min != nil && strings.HasPrefix(ro.path, "/vsi") {
		r.min.band(r.collection, ro.path, band, order)
	}
	spanned := (all.x1/bw - all.x0/bw + 1) * (all.y1/bh - all.y0/bh + 1)
	aw, ah := all.x1-all.x0+1, all.y1-all.y0+1
	if oneWindow(strings.HasPrefix(ro.path, "/vsi"), spanned, len(blocks), aw*ah, bw*bh) {
		buf, at := r.typed(bs.DataType, aw*ah)
		r.reads, r.bytes = r.reads+1, r.bytes+int64(aw*ah*bs.DataType.Size())
		if err := r.log.timed(func() error {
			return band.Read(all.x0, all.y0, buf, aw, ah, godal.ConfigOption(ro.ds.cfg...), godal.ErrLogger(r.log.handler))
		}); err != nil {
			return fmt.Errorf("read %s window: %w", ro.asset.Href, err)
		}
		for _, i := range idx {
			ro.val[i] = at((ro.row[i]-all.y0)*aw + ro.col[i] - all.x0)
		}
		return nil
	}
	sort.Slice(order, func(a, b int) bool {
		if order[a][1] != order[b][1] {
			return order[a][1] < order[b][1]
		}
		return order[a][0] < order[b][0]
	})
	// Cells per block.
	per := map[[2]int][]int{}
	for _, i := range idx {
		k := [2]int{ro.col[i] / bw, ro.row[i] / bh}
		per[k] = append(per[k], i)
	}
	for _, k := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		w := blocks[k]
		ww, wh := w.x1-w.x0+1, w.y1-w.y0+1
		buf, at := r.typed(bs.DataType, ww*wh)
		r.reads, r.bytes = r.reads+1, r.bytes+int64(ww*wh*bs.DataType.Size())
		if err := r.log.timed(func() error {
			return band.Read(w.x0, w.y0, buf, ww, wh, godal.ConfigOption(ro.ds.cfg...), godal.ErrLogger(r.log.handler))
		}); err != nil {
			return fmt.Errorf("read %s block %v: %w", ro.asset.Href, k, err)
		}
		for _, i := range per[k] {
			ro.val[i] = at((ro.row[i]-w.y0)*ww + ro.col[i] - w.x0)
		}
	}
	return nil
}

// oneWindow tells readPixels to read the cells' bounding window (area
// pixels, spanning spanned blocks of block pixels, needed of which hold
// cells) in one call rather than block by block. Locally, only when that
// decodes exactly the needed blocks and is no larger than a block: large
// windows cost more than the blocks they decode (buffer, conversion). On
// an object store each call for a block not yet fetched waits a round
// trip, while one call fetches all its blocks at once (GDAL's GTiff driver
// asks for their byte ranges in parallel, consecutive ones merged), so a
// remote band pays one round trip instead of one per block; the window may
// then decode up to as many blocks again as it needs, and hold up to four
// blocks' pixels (the buffer of one band read).
func oneWindow(remote bool, spanned, needed, area, block int) bool {
	if remote {
		return spanned <= 2*needed && area <= 4*block
	}
	return spanned <= needed && area <= block
}

// typed returns a buffer of n pixels in the band's own data type (so GDAL
// copies decoded blocks without converting them) and an accessor giving
// pixel i as float64.
func (r *reader) typed(dt godal.DataType, n int) (any, func(i int) float64) {
	switch dt {
	case godal.Byte:
		b := grow(&r.u8, n)
		return b, func(i int) float64 { return float64(b[i]) }
	case godal.UInt16:
		b := grow(&r.u16, n)
		return b, func(i int) float64 { return float64(b[i]) }
	case godal.Int16:
		b := grow(&r.i16, n)
		return b, func(i int) float64 { return float64(b[i]) }
	case godal.Float32:
		b := grow(&r.f32, n)
		return b, func(i int) float64 { return float64(b[i]) }
	}
	b := grow(&r.buf, n)
	return b, func(i int) float64 { return b[i] }
}

func grow[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	return (*s)[:n]
}
