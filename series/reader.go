package series

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
)

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
	s.problem(it, assetProblem(asset, reason, err), n)
}

// problem counts n skips of p's reason and records p as a problem of it.
func (s *sceneStats) problem(it *Item, p *Problem, n int) {
	s.count(p.Reason, n)
	p.Item = it.ID
	s.problems = append(s.problems, *p)
}

// assetProblem is why a whole scene is skipped, and the asset at fault
// ("" for none); the item is filled in when it is counted
// (sceneStats.problem). The error's text is redacted (storage.RedactSigned).
func assetProblem(asset string, reason SkipReason, err error) *Problem {
	p := &Problem{Asset: asset, Reason: reason}
	if err != nil {
		p.Detail = storage.RedactSigned(err.Error())
	}
	return p
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
	wkts  *wktCache // the Sample's, shared by its readers; nil: none
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
	ss.problem(it, skip, 1)
	// An asset whose token endpoint kept failing: its talhões are
	// incomplete (the access rules are applied again before each batch).
	if skip.Reason == SkipTransient {
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
func resolveRoles(it *Item, p *Profile, allow []hrefRule) (roles []*role, qa *role, skip *Problem) {
	for _, w := range profileWants(p) {
		k, a, ok := firstKey(it, w.keys)
		if !ok {
			if w.name == "qa" && p.QAOptional {
				continue
			}
			return nil, nil, assetProblem(strings.Join(w.keys, "|"), SkipMissingAsset, fmt.Errorf("no %s asset (keys %v)", w.name, w.keys))
		}
		path, err := gdalPath(a.Href, allow)
		if err != nil {
			return nil, nil, assetProblem(k, SkipBadHref, err)
		}
		if e := a.AccessErr; e != nil {
			reason := SkipAccess
			if e.Transient {
				reason = SkipTransient
			}
			return nil, nil, assetProblem(k, reason, e)
		}
		ro := &role{name: w.name, key: k, asset: a, path: path, rad: AssetRadiometry(p, it, a)}
		if err := ro.rad.Check(p); err != nil {
			return nil, nil, assetProblem(k, SkipBadScaling, err)
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
func (r *reader) read(ctx context.Context, p *Profile, roles []*role, qa *role, lon, lat []float64) ([]MaskReason, *Problem) {
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
			return nil, assetProblem(qa.key, readReason(ctx), err)
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
func (r *reader) readRoles(ctx context.Context, roles []*role, idx []int) *Problem {
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
				return assetProblem(ro.key, readReason(ctx), err)
			}
		}
		return nil
	}
	skips := make([]*Problem, len(order))
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
					skips[i] = assetProblem(ro.key, readReason(ctx), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	r.addCounts(subs)
	for _, sk := range skips {
		if sk != nil {
			return sk
		}
	}
	return nil
}

// addCounts adds the reads and bytes of the sub-readers subs (each
// goroutine's own, for its buffers) to r's.
func (r *reader) addCounts(subs []*reader) {
	for _, sub := range subs {
		r.reads, r.bytes = r.reads+sub.reads, r.bytes+sub.bytes
	}
}

// openRoles opens each role's file once (files holds those already open)
// and picks its band.
func (r *reader) openRoles(roles []*role, files map[string]*openDS) *Problem {
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
				return assetProblem(ro.key, reason, err)
			}
			files[ro.path] = f
			ro.ds = f
		}
		if ro.asset.Band > len(ro.ds.ds.Bands()) {
			return assetProblem(ro.key, SkipMissingBand, fmt.Errorf("%s has %d bands, asset wants band %d", ro.asset.Href, len(ro.ds.ds.Bands()), ro.asset.Band))
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
func (r *reader) openRemote(roles []*role, files map[string]*openDS) *Problem {
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
	var skip *Problem
	for i, o := range res {
		if o.err == nil {
			files[paths[i]] = o.f // closed by read, with the others
		} else if skip == nil {
			skip = assetProblem(key[paths[i]].key, o.reason, o.err)
		}
	}
	return skip
}

// locate places the cell centres in each role's pixel space (one
// transform per CRS); a cell outside the raster gets column and row -1.
func (r *reader) locate(roles []*role, lon, lat []float64) *Problem {
	proj := map[string][2][]float64{}
	for _, ro := range roles {
		xy, ok := proj[ro.ds.wkt]
		if !ok {
			x, y, err := r.toCRS(ro.ds.wkt, lon, lat)
			if err != nil {
				return assetProblem(ro.key, SkipNoCRS, err)
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
