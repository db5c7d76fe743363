package series

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/airbusgeo/godal"
)

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
	geo := r.wkts.tags(path, cfg)
	ds, err := r.gdalOpen(path, cfg)
	if err != nil {
		return nil, SkipUnreadable, err
	}
	if d := ds.Driver().ShortName(); !slices.Contains(openDrivers, d) {
		ds.Close()
		return nil, SkipBadHref, fmt.Errorf("open %s: driver %s is not accepted for catalog assets: %w", path, d, errBadHref)
	}
	f := &openDS{ds: ds, wkt: r.wkts.projection(path, geo, ds), cfg: cfg}
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

// readPixels reads ro's band at the pixels of cells idx into ro.val.
// A remote band is read in windows that decode only blocks holding cells
// (remoteWindows); a local one in one window when that decodes exactly the
// needed blocks and is no larger than a block, else the sub-window of each
// block that holds cells.
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
	blocks := map[[2]int]*window{}
	var order [][2]int
	all := emptyWindow()
	for _, i := range idx {
		c, rr := ro.col[i], ro.row[i]
		k := [2]int{c / bw, rr / bh}
		w, ok := blocks[k]
		if !ok {
			w = emptyWindow()
			blocks[k] = w
			order = append(order, k)
		}
		w.add(c, rr)
		all.add(c, rr)
	}
	remote := strings.HasPrefix(ro.path, "/vsi")
	if r.min != nil && remote {
		r.min.band(r.collection, ro.path, band, order)
	}
	var wins []window
	switch {
	case remote:
		wins = remoteWindows(blocks, maxWindowBlocks)
	case oneWindow((all.x1/bw-all.x0/bw+1)*(all.y1/bh-all.y0/bh+1), len(blocks), all.area(), bw*bh):
		wins = []window{*all}
	default:
		slices.SortFunc(order, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[1], b[1]), cmp.Compare(a[0], b[0])) })
		for _, k := range order {
			wins = append(wins, *blocks[k])
		}
	}
	return r.readWindows(ctx, ro, idx, wins)
}

// readWindows reads ro's band in each window of wins and takes the value
// of each cell of idx from the window that holds it: a remote band's
// windows at once (readWindowsAtOnce), a local one's in turn.
func (r *reader) readWindows(ctx context.Context, ro *role, idx []int, wins []window) error {
	if len(wins) > 1 && strings.HasPrefix(ro.path, "/vsi") {
		return r.readWindowsAtOnce(ctx, ro, idx, wins)
	}
	return r.readWindowsOn(ctx, ro, ro.band, idx, wins)
}

// maxBandHandles bounds the handles one remote band is read through at
// once (readWindowsAtOnce).
const maxBandHandles = 4

// curlChunk is the unit GDAL's /vsicurl/ fetches ranges in
// (CPL_VSIL_CURL_CHUNK_SIZE, GDAL's default, which manejo leaves).
const curlChunk = 16384

// readWindowsAtOnce reads a remote band's windows (one ranged GET each)
// through up to maxBandHandles handles at once: the band's own dataset
// and further opens of its file (a GDAL dataset is not safe for
// concurrent use), whose headers come from GDAL's range cache, which the
// first open filled, so they send no request. A band whose cells reach
// two rows of tiles then waits one round trip, not two. Windows whose
// bytes would share one of GDAL's chunks stay on one handle, one after
// the other (chains), so no chunk is fetched twice: the same bytes as
// reading them all in turn.
func (r *reader) readWindowsAtOnce(ctx context.Context, ro *role, idx []int, wins []window) error {
	chains := r.chains(ro, wins)
	if len(chains) < 2 {
		return r.readWindowsOn(ctx, ro, ro.band, idx, wins)
	}
	n := min(len(chains), maxBandHandles)
	errs := make([]error, n)
	subs := make([]*reader, n)
	var wg sync.WaitGroup
	for k := range n {
		var part []window // chains k, k+n, …: still in descending order
		for i := k; i < len(chains); i += n {
			part = append(part, chains[i]...)
		}
		subs[k] = &reader{log: r.log} // its own buffers and counts
		wg.Add(1)
		go func() {
			defer wg.Done()
			band := ro.band
			if k > 0 {
				ds, err := subs[k].reopen(ro)
				if err != nil {
					errs[k] = err
					return
				}
				defer ds.Close()
				band = ds.Bands()[ro.asset.Band-1]
			}
			errs[k] = subs[k].readWindowsOn(ctx, ro, band, idx, part)
		}()
	}
	wg.Wait()
	r.addCounts(subs)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// chains cuts wins, in descending order of their bytes in the file (the
// TIFF's BLOCK_OFFSET/BLOCK_SIZE metadata of their tiles), into runs of
// windows each sharing a GDAL chunk with the next; one chain when a
// window's tiles have no such metadata.
func (r *reader) chains(ro *role, wins []window) [][]window {
	bs := ro.band.Structure()
	bw, bh := bs.BlockSizeX, bs.BlockSizeY
	if bw <= 0 || bh <= 0 {
		return [][]window{wins}
	}
	type span struct {
		w      window
		lo, hi int64 // bytes [lo, hi) of its tiles
	}
	spans := make([]span, 0, len(wins))
	for _, w := range wins {
		sp := span{w: w, lo: math.MaxInt64, hi: -1}
		for bx := w.x0 / bw; bx <= w.x1/bw; bx++ {
			for by := w.y0 / bh; by <= w.y1/bh; by++ {
				off, size := blockMeta(ro.band, "OFFSET", bx, by), blockMeta(ro.band, "SIZE", bx, by)
				if off < 0 || size <= 0 {
					return [][]window{wins}
				}
				sp.lo, sp.hi = min(sp.lo, off), max(sp.hi, off+size)
			}
		}
		spans = append(spans, sp)
	}
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(b.lo, a.lo) })
	var out [][]window
	for i, sp := range spans {
		if i == 0 || (sp.hi-1)/curlChunk < spans[i-1].lo/curlChunk {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], sp.w)
	}
	return out
}

// reopen opens ro's file again, with the options of its first open.
func (r *reader) reopen(ro *role) (*godal.Dataset, error) {
	r.reads++
	return r.gdalOpen(ro.path, ro.ds.cfg)
}

// gdalOpen opens path with the accepted drivers (openDrivers) and cfg,
// timed and logged through the reader's GDAL handler; its error names
// path ("open PATH: …", which the transient and redaction rules read).
func (r *reader) gdalOpen(path string, cfg []string) (*godal.Dataset, error) {
	var ds *godal.Dataset
	err := r.log.timed(func() (err error) {
		ds, err = godal.Open(path, godal.RasterOnly(), godal.Drivers(openDrivers...), godal.ConfigOption(cfg...), godal.ErrLogger(r.log.handler))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return ds, nil
}

// readWindowsOn reads band (ro's, or the same band of another handle of
// its file) in each window of wins, in turn, into ro.val.
func (r *reader) readWindowsOn(ctx context.Context, ro *role, band godal.Band, idx []int, wins []window) error {
	dt := band.Structure().DataType
	for _, w := range wins {
		if err := ctx.Err(); err != nil {
			return err
		}
		ww, wh := w.x1-w.x0+1, w.y1-w.y0+1
		buf, at := r.typed(dt, ww*wh)
		r.reads, r.bytes = r.reads+1, r.bytes+int64(ww*wh*dt.Size())
		if err := r.log.timed(func() error {
			return band.Read(w.x0, w.y0, buf, ww, wh, godal.ConfigOption(ro.ds.cfg...), godal.ErrLogger(r.log.handler))
		}); err != nil {
			return fmt.Errorf("read %s window %d,%d %dx%d: %w", ro.asset.Href, w.x0, w.y0, ww, wh, err)
		}
		for _, i := range idx {
			if c, rr := ro.col[i], ro.row[i]; w.holds(c, rr) {
				ro.val[i] = at((rr-w.y0)*ww + c - w.x0)
			}
		}
	}
	return nil
}

// window is a rectangle of pixels, corners included.
type window struct{ x0, y0, x1, y1 int }

func emptyWindow() *window { return &window{math.MaxInt, math.MaxInt, -1, -1} }

// add grows w to hold pixel (c, r).
func (w *window) add(c, r int) {
	w.x0, w.y0, w.x1, w.y1 = min(w.x0, c), min(w.y0, r), max(w.x1, c), max(w.y1, r)
}

func (w *window) holds(c, r int) bool { return c >= w.x0 && c <= w.x1 && r >= w.y0 && r <= w.y1 }

func (w *window) area() int { return (w.x1 - w.x0 + 1) * (w.y1 - w.y0 + 1) }

// maxWindowBlocks bounds the blocks of one remote window read (the
// pixels of one band read's buffer).
const maxWindowBlocks = 4

// remoteWindows cuts the blocks holding cells (by column and row of
// block, each with its cells' extent) into windows that decode only those
// blocks: runs of at most maxBlocks consecutive blocks along a block row,
// each window the extent of its blocks' cells. A run's tiles are stored
// one after the other (COG tiles are stored row by row), so GDAL fetches
// a window in one ranged GET, and never a tile no cell needs, which the
// bounding window of scattered cells would. (A window over two block rows
// would be fetched as two ranges at once, which GDAL 3.6's network
// statistics count as one request: run.json's requests would fall short
// of the store's count.)
//
// The windows come in descending order of their first block: GDAL's
// /vsicurl/ doubles the bytes it fetches ahead each time a read starts
// where its previous fetch ended, which reading a file's runs in
// ascending order does, fetching tiles past the last one needed.
func remoteWindows(blocks map[[2]int]*window, maxBlocks int) []window {
	keys := make([][2]int, 0, len(blocks))
	for k := range blocks {
		keys = append(keys, k)
	}
	// Descending row, then column.
	slices.SortFunc(keys, func(a, b [2]int) int { return cmp.Or(cmp.Compare(b[1], a[1]), cmp.Compare(b[0], a[0])) })
	var wins []window
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j][1] == keys[i][1] && keys[j][0] == keys[j-1][0]-1 && j-i < maxBlocks {
			j++
		}
		w := *emptyWindow()
		for _, k := range keys[i:j] {
			b := blocks[k]
			w.add(b.x0, b.y0)
			w.add(b.x1, b.y1)
		}
		wins = append(wins, w)
		i = j
	}
	return wins
}

// oneWindow tells readPixels to read a local band's cells in their
// bounding window (area pixels, spanning spanned blocks of block pixels,
// needed of which hold cells) in one call rather than block by block:
// only when that decodes exactly the needed blocks and is no larger than
// a block (large windows cost more than the blocks they decode: buffer,
// conversion).
func oneWindow(spanned, needed, area, block int) bool {
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
