package slope

// This file is the I/O edge of the package: it reads DEM windows with GDAL
// (godal) and hands plain slices to the pure math of horn.go, mask.go and
// stats.go.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/airbusgeo/godal"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"
	"golang.org/x/sync/errgroup"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
)

// DEM is an open elevation raster (band 1, elevations in metres) ready to
// give the slope of talhões. Field is safe for concurrent use: reads are
// serialized on the one GDAL dataset, the math runs in parallel. Close it.
type DEM struct {
	src    string
	name   string     // src with any signature redacted: what every message names
	mu     sync.Mutex // guards ds and band (GDAL datasets are not thread-safe)
	ds     *godal.Dataset
	band   godal.Band
	gt     [6]float64
	width  int
	height int

	geographic bool
	ell        Ellipsoid // geographic DEMs: ellipsoid of the datum
	unitM      float64   // projected DEMs: metres per CRS unit
	nodata     float64
	hasNoData  bool
	toDEM      *godal.Transform // lon/lat WGS84 → DEM CRS; nil when the DEM is in EPSG:4326
	wgs84, srs *godal.SpatialRef
}

// Open opens the DEM at src (any GDAL raster: GeoTIFF, VRT mosaic, COG;
// s3:// and http(s):// locations are read through /vsis3/ and /vsicurl/, see
// storage.GDALPath) and checks it: north-up geotransform, a CRS, and the
// resolution rule of IN 6.3 (an error wrapping ErrTooCoarse; see
// CheckResolution).
func Open(ctx context.Context, src string) (*DEM, error) {
	return open(ctx, src, func(l *gdalLog) (*godal.Dataset, error) {
		return godal.Open(storage.GDALPath(src), godal.RasterOnly(), godal.ErrLogger(l.handler))
	})
}

// open opens the DEM src with how, given the error handler of its GDAL
// calls, and checks it. src is redacted once (storage.RedactSigned: a
// stac: DEM's tiles are signed URLs) into the DEM's name, which every
// message of the DEM says.
func open(ctx context.Context, src string, how func(*gdalLog) (*godal.Dataset, error)) (*DEM, error) {
	d := &DEM{src: src, name: storage.RedactSigned(src)}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open DEM %s: %w", d.name, err)
	}
	storage.InitGDAL()
	var l gdalLog
	ds, err := how(&l)
	if err != nil {
		return nil, fmt.Errorf("open DEM %s: %w", d.name, l.explain(err))
	}
	d.ds = ds
	if err := d.init(); err != nil {
		d.Close()
		return nil, fmt.Errorf("open DEM %s: %w", d.name, err)
	}
	return d, nil
}

func (d *DEM) init() error {
	bands := d.ds.Bands()
	if len(bands) == 0 {
		return errors.New("no raster band")
	}
	d.band = bands[0]
	st := d.ds.Structure()
	d.width, d.height = st.SizeX, st.SizeY
	gt, err := d.ds.GeoTransform()
	if err != nil {
		return fmt.Errorf("read geotransform: %w", err)
	}
	if gt[2] != 0 || gt[4] != 0 || gt[1] <= 0 || gt[5] == 0 {
		return fmt.Errorf("geotransform %v is not north-up (rotated or flipped DEMs are not supported; gdalwarp them first)", gt)
	}
	d.gt = gt
	d.nodata, d.hasNoData = d.band.NoData()

	dsSRS := d.ds.SpatialRef()
	if dsSRS == nil {
		return errors.New("no CRS")
	}
	wkt, err := dsSRS.WKT()
	if err != nil || wkt == "" {
		return errors.New("no CRS")
	}
	if d.srs, err = godal.NewSpatialRefFromWKT(wkt); err != nil {
		return fmt.Errorf("read CRS: %w", err)
	}
	if d.wgs84, err = godal.NewSpatialRefFromEPSG(4326); err != nil {
		return fmt.Errorf("make EPSG:4326: %w", err)
	}
	d.geographic = d.srs.Geographic()
	if !d.geographic && !d.srs.Projected() {
		return errors.New("CRS is neither geographic nor projected")
	}
	if d.geographic {
		if u, ok := d.srs.AttrValue("GEOGCS|UNIT", 1); ok {
			if f, err := strconv.ParseFloat(u, 64); err == nil && math.Abs(f-math.Pi/180) > 1e-9 {
				return fmt.Errorf("geographic CRS in angular unit %s rad, only degrees are supported", u)
			}
		}
		a, err := d.srs.SemiMajor()
		if err != nil {
			return fmt.Errorf("read ellipsoid: %w", err)
		}
		b, err := d.srs.SemiMinor()
		if err != nil {
			return fmt.Errorf("read ellipsoid: %w", err)
		}
		d.ell = Ellipsoid{A: a}
		if a != b {
			d.ell.InvF = a / (a - b)
		}
	} else {
		d.unitM = 1
		if u, ok := d.srs.AttrValue("PROJCS|UNIT", 1); ok {
			if f, err := strconv.ParseFloat(u, 64); err == nil && f > 0 {
				d.unitM = f
			}
		}
	}
	if !d.srs.IsSame(d.wgs84) {
		if d.toDEM, err = godal.NewTransform(d.wgs84, d.srs); err != nil {
			return fmt.Errorf("make transform from EPSG:4326: %w", err)
		}
	}
	if d.geographic {
		return CheckResolution(gt[1], gt[5], true)
	}
	return CheckResolution(gt[1]*d.unitM, gt[5]*d.unitM, false)
}

// Source returns the location the DEM was opened from.
func (d *DEM) Source() string { return d.src }

// Geographic reports whether the DEM is in a geographic (lon/lat) CRS.
func (d *DEM) Geographic() bool { return d.geographic }

// Close releases the GDAL dataset; the DEM must not be used afterwards.
func (d *DEM) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.toDEM != nil {
		d.toDEM.Close()
		d.toDEM = nil
	}
	if d.srs != nil {
		d.srs.Close()
		d.srs = nil
	}
	if d.wgs84 != nil {
		d.wgs84.Close()
		d.wgs84 = nil
	}
	if d.ds == nil {
		return nil
	}
	err := d.ds.Close()
	d.ds = nil
	if err != nil {
		return fmt.Errorf("close DEM %s: %w", d.name, err)
	}
	return nil
}

// Field returns the slope Result of talhão f: Horn slope on the DEM window
// that covers the talhão plus a one-pixel margin (only that window is read),
// averaged over the pixels whose centre lies inside f.Geometry. Pixels
// outside the DEM count as void. A talhão too small to hold any pixel centre
// takes the pixel under its centroid, with a warning. Errors name the
// talhão; one wrapping ErrAllVoid means no valid pixel.
func (d *DEM) Field(ctx context.Context, f grid.Field) (Result, error) {
	fail := func(err error) (Result, error) {
		return Result{FieldID: f.ID}, fmt.Errorf("slope of talhão %q: %w", f.ID, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if len(f.Geometry) == 0 {
		return fail(errors.New("empty geometry"))
	}
	mp, err := d.toDEMCRS(f.Geometry)
	if err != nil {
		return fail(err)
	}
	win, err := d.window(mp)
	if err != nil {
		return fail(err)
	}
	mask, warnings, err := centreMask(mp, win)
	if err != nil {
		return fail(err)
	}
	dem, err := d.read(win)
	if err != nil {
		return fail(err)
	}
	dx, dy := d.pixelSizes(win.gt, win.h)
	sl, err := Horn(dem, win.w, win.h, dx, dy)
	if err != nil {
		return fail(err)
	}
	st, err := Summarize(sl, mask)
	if err != nil {
		return fail(err)
	}
	res := NewResult(f.ID, st)
	res.Warnings = append(warnings, res.Warnings...)
	res.PixelXM, res.PixelYM = dx[len(dx)/2], dy[len(dy)/2]
	res.PlantioContorno, res.Terraceamento = f.PlantioContorno, f.Terraceamento
	return res, nil
}

// window is a block of DEM pixels: w×h pixels from column c0, row r0 (may
// reach outside the raster), with its own geotransform gt.
type window struct {
	c0, r0, w, h int
	gt           [6]float64
}

// window returns the DEM window that covers mp (in the DEM's CRS) plus a
// one-pixel margin.
func (d *DEM) window(mp orb.MultiPolygon) (window, error) {
	gt := d.gt
	b := mp.Bound()
	// Pixel coordinates of the bounding box corners.
	px0, px1 := (b.Min[0]-gt[0])/gt[1], (b.Max[0]-gt[0])/gt[1]
	py0, py1 := (b.Min[1]-gt[3])/gt[5], (b.Max[1]-gt[3])/gt[5]
	if py0 > py1 {
		py0, py1 = py1, py0
	}
	if math.IsNaN(px0+px1+py0+py1) || math.IsInf(px0+px1+py0+py1, 0) {
		return window{}, errors.New("geometry does not map onto the DEM grid")
	}
	c0, c1 := int(math.Floor(px0))-1, int(math.Ceil(px1))+1
	r0, r1 := int(math.Floor(py0))-1, int(math.Ceil(py1))+1
	w, h := c1-c0, r1-r0
	if w*h > 64<<20 {
		return window{}, fmt.Errorf("window of %d×%d DEM pixels is too large for one talhão", w, h)
	}
	wgt := gt
	wgt[0] = gt[0] + float64(c0)*gt[1]
	wgt[3] = gt[3] + float64(r0)*gt[5]
	return window{c0: c0, r0: r0, w: w, h: h, gt: wgt}, nil
}

// centreMask marks the window's pixels whose centre lies inside mp. A
// talhão too small to hold any pixel centre takes the pixel under its
// centroid, with a warning.
func centreMask(mp orb.MultiPolygon, win window) ([]bool, []string, error) {
	mask, err := Rasterize(mp, win.gt, win.w, win.h)
	if err != nil {
		return nil, nil, err
	}
	if anyTrue(mask) {
		return mask, nil, nil
	}
	cen, _ := planar.CentroidArea(mp)
	cc := int(math.Floor((cen[0] - win.gt[0]) / win.gt[1]))
	rr := int(math.Floor((cen[1] - win.gt[3]) / win.gt[5]))
	if cc < 0 || cc >= win.w || rr < 0 || rr >= win.h {
		return nil, nil, errors.New("no DEM pixel centre inside the talhão and its centroid is outside it")
	}
	mask[rr*win.w+cc] = true
	return mask, []string{"no DEM pixel centre inside the talhão: used the pixel under its centroid"}, nil
}

// read reads the elevations of a window; pixels outside the raster and
// no-data pixels are NaN (void).
func (d *DEM) read(win window) ([]float32, error) {
	c0, r0, w, h := win.c0, win.r0, win.w, win.h
	// Intersect the window with the raster; the rest stays NaN (void).
	ic0, ic1 := max(c0, 0), min(c0+w, d.width)
	ir0, ir1 := max(r0, 0), min(r0+h, d.height)
	if ic0 >= ic1 || ir0 >= ir1 {
		return nil, fmt.Errorf("outside the DEM extent (%s)", d.name)
	}
	dem := make([]float32, w*h)
	nan := float32(math.NaN())
	for i := range dem {
		dem[i] = nan
	}
	iw, ih := ic1-ic0, ir1-ir0
	buf := make([]float32, iw*ih)
	d.mu.Lock()
	if d.ds == nil {
		d.mu.Unlock()
		return nil, errors.New("DEM is closed")
	}
	var l gdalLog
	err := d.band.Read(ic0, ir0, buf, iw, ih, godal.ErrLogger(l.handler))
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("read DEM window %d,%d %d×%d of %s: %w", ic0, ir0, iw, ih, d.name, l.explain(err))
	}
	if d.hasNoData {
		NoDataToNaN(buf, d.nodata)
	} else {
		NoDataToNaN(buf, math.NaN())
	}
	for r := 0; r < ih; r++ {
		copy(dem[(ir0-r0+r)*w+(ic0-c0):], buf[r*iw:(r+1)*iw])
	}
	return dem, nil
}

// gdalLog is the error handler of one GDAL call on the DEM: a warning is
// not an error. GDAL warns "HTTP error code: 503 - <url>. Retrying again
// in 0.5 secs" when it retries a request itself, which godal's default
// handler would turn into a failed open or read even when the retry
// succeeded. The retries it announced are kept: when the call fails after
// them (GDAL then reports only the driver's failure, "TIFFReadEncodedTile()
// failed"), explain says so, which makes the failure transient to its
// caller (ErrRetried: a 503 or a time-out that outlasted GDAL's retries).
type gdalLog struct {
	retries int
	last    string // the last retry warning, without its URL
}

func (l *gdalLog) handler(ec godal.ErrorCategory, _ int, msg string) error {
	if ec > godal.CE_Warning {
		// GDAL's failures may name the URL it read, signature and all.
		return errors.New(storage.RedactSigned(msg))
	}
	if strings.Contains(msg, "Retrying") {
		l.retries++
		// "HTTP error code: 503 - <url>. Retrying…": the URL may carry a
		// signature (a SAS token), so only the status is kept.
		l.last, _, _ = strings.Cut(storage.RedactSigned(msg), " - ")
	}
	return nil
}

// strict is handler for a call where a warning is a failure too.
func (l *gdalLog) strict(ec godal.ErrorCategory, code int, msg string) error {
	if ec == godal.CE_Warning {
		ec = godal.CE_Failure
	}
	return l.handler(ec, code, msg)
}

// explain adds to err, a failed call's error, the retries GDAL announced
// during it (ErrRetried).
func (l *gdalLog) explain(err error) error {
	if l.retries == 0 {
		return err
	}
	return fmt.Errorf("%w (%w %d time(s), the last: %s)", err, ErrRetried, l.retries, l.last)
}

// ErrRetried marks a DEM open or read that failed after GDAL retried some
// of its requests (GDAL retries only HTTP 429, 500, 502–504 and time-outs):
// a transient failure, which a later run may get past.
var ErrRetried = errors.New("slope: GDAL retried the DEM's requests")

// Fields returns the slope of each talhão of fields, in order, computing
// jobs talhões at a time (at least one); errs[i] is the error of talhão i.
// It stops starting talhões once ctx is done.
func (d *DEM) Fields(ctx context.Context, fields []grid.Field, jobs int) ([]Result, []error) {
	results := make([]Result, len(fields))
	errs := make([]error, len(fields))
	var eg errgroup.Group
	eg.SetLimit(max(jobs, 1))
	for i, f := range fields {
		if ctx.Err() != nil {
			break
		}
		eg.Go(func() error {
			results[i], errs[i] = d.Field(ctx, f)
			return nil
		})
	}
	_ = eg.Wait() // the errors are per talhão, in errs
	return results, errs
}

// pixelSizes returns per-row (geographic) or single (projected) pixel sizes
// in metres for a window of h rows with geotransform wgt.
func (d *DEM) pixelSizes(wgt [6]float64, h int) (dx, dy []float64) {
	if !d.geographic {
		return []float64{math.Abs(wgt[1]) * d.unitM}, []float64{math.Abs(wgt[5]) * d.unitM}
	}
	dx, dy = make([]float64, h), make([]float64, h)
	for r := range h {
		lat := wgt[3] + (float64(r)+0.5)*wgt[5]
		dx[r], dy[r] = PixelSizeM(lat, wgt[1], wgt[5], d.ell)
	}
	return dx, dy
}

// toDEMCRS returns mp (lon/lat WGS84) in the DEM's CRS.
func (d *DEM) toDEMCRS(mp orb.MultiPolygon) (orb.MultiPolygon, error) {
	if d.toDEM == nil {
		return mp, nil
	}
	n := 0
	for _, p := range mp {
		for _, r := range p {
			n += len(r)
		}
	}
	xs, ys := make([]float64, 0, n), make([]float64, 0, n)
	for _, p := range mp {
		for _, r := range p {
			for _, pt := range r {
				xs = append(xs, pt[0])
				ys = append(ys, pt[1])
			}
		}
	}
	ok := make([]bool, n)
	d.mu.Lock()
	err := d.toDEM.TransformEx(xs, ys, nil, ok)
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("reproject talhão to the DEM CRS: %w", err)
	}
	out := make(orb.MultiPolygon, len(mp))
	i := 0
	for pi, p := range mp {
		out[pi] = make(orb.Polygon, len(p))
		for ri, r := range p {
			ring := make(orb.Ring, len(r))
			for k := range r {
				if !ok[i] {
					return nil, fmt.Errorf("reproject talhão vertex %v to the DEM CRS failed", r[k])
				}
				ring[k] = orb.Point{xs[i], ys[i]}
				i++
			}
			out[pi][ri] = ring
		}
	}
	return out, nil
}

func anyTrue(m []bool) bool {
	for _, v := range m {
		if v {
			return true
		}
	}
	return false
}

// WriteCOG writes a single-band Float32 Cloud Optimized GeoTIFF DEM to dst (a
// local path or any GDAL-writable name) from row-major elevations in metres,
// the GDAL geotransform gt and the CRS epsg, with nodata as the void value.
// It is how test fixtures and the synthetic archive write their DEMs: use
// EPSG:4326 with 1 arc-second pixels (gt[1] = 1/3600, gt[5] = −1/3600), as
// NASADEM, or a UTM zone (EPSG:327xx) with 30 m pixels.
func WriteCOG(ctx context.Context, dst string, dem []float32, width, height int, gt [6]float64, epsg int, nodata float64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write DEM %s: %w", dst, err)
	}
	if len(dem) != width*height {
		return fmt.Errorf("write DEM %s: %d values for %d×%d pixels: %w", dst, len(dem), width, height, ErrBadInput)
	}
	storage.InitGDAL()
	mem, err := godal.Create(godal.Memory, "", 1, godal.Float32, width, height)
	if err != nil {
		return fmt.Errorf("write DEM %s: create in memory: %w", dst, err)
	}
	defer mem.Close()
	sr, err := godal.NewSpatialRefFromEPSG(epsg)
	if err != nil {
		return fmt.Errorf("write DEM %s: EPSG:%d: %w", dst, epsg, err)
	}
	defer sr.Close()
	if err := mem.SetSpatialRef(sr); err != nil {
		return fmt.Errorf("write DEM %s: set CRS: %w", dst, err)
	}
	if err := mem.SetGeoTransform(gt); err != nil {
		return fmt.Errorf("write DEM %s: set geotransform: %w", dst, err)
	}
	band := mem.Bands()[0]
	if err := band.SetNoData(nodata); err != nil {
		return fmt.Errorf("write DEM %s: set nodata: %w", dst, err)
	}
	if err := band.Write(0, 0, dem, width, height); err != nil {
		return fmt.Errorf("write DEM %s: write pixels: %w", dst, err)
	}
	out, err := mem.Translate(dst, []string{"-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=YES", "-co", "BLOCKSIZE=512"})
	if err != nil {
		return fmt.Errorf("write DEM %s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("write DEM %s: close: %w", dst, err)
	}
	return nil
}

// OpenMosaic opens DEM tiles (locations or GDAL paths, such as the tiles a
// STAC search found) as one virtual mosaic, a VRT held in memory; name is
// what Source reports and messages say.
func OpenMosaic(ctx context.Context, name string, tiles []string) (*DEM, error) {
	return open(ctx, name, func(l *gdalLog) (*godal.Dataset, error) {
		if len(tiles) == 0 {
			return nil, errors.New("no tile")
		}
		paths := make([]string, len(tiles))
		for i, t := range tiles {
			paths[i] = storage.GDALPath(t)
		}
		mosaicSeq.Add(1)
		// GDAL warns that it skips a tile it cannot open ("Can't open
		// <url>. Skipping it"): the mosaic would lack it, so every warning
		// fails the open (as godal's default handler has it), redacted.
		ds, err := godal.BuildVRT(fmt.Sprintf("/vsimem/manejo-dem-mosaic-%d.vrt", mosaicSeq.Load()), paths, nil, godal.ErrLogger(l.strict))
		if err != nil {
			return nil, fmt.Errorf("mosaic of %d tiles: %w", len(tiles), err)
		}
		return ds, nil
	})
}

// mosaicSeq names each in-memory mosaic apart.
var mosaicSeq atomic.Int64
