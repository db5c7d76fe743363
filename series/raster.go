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
	f := &openDS{ds: ds, wkt: projection(path, ds, cfg), cfg: cfg}
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
