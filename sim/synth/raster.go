package synth

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/sim/pheno"
	"golang.org/x/sync/errgroup"
)

// Collection is the STAC collection of the archive's items.
const Collection = "sentinel-2-l2a"

// item is one acquisition: its STAC metadata and the statistics the truth
// needs.
type item struct {
	ID       string
	Date     time.Time
	Platform string
	Baseline string // s2:processing_baseline
	Applied  bool   // earthsearch:boa_offset_applied
	// RasterOffset: the reflectance assets carry raster:bands scale 0.0001
	// and offset −0.1.
	RasterOffset bool
	DNOffset     int // DN offset in the data: 1000 or 0

	// Scene statistics, percent of the 20 m pixels (nodata: of all;
	// classes: of the valid ones).
	Nodata, High, Medium, Cirrus, Shadow, Veg, NotVeg, Water float64

	// Per talhão, counts of 10 m pixels: masked by SCL, unflagged residue,
	// no data.
	masked, residue, nodata []int
}

// CloudCover is eo:cloud_cover: SCL 8, 9 and 10 in percent of the valid
// pixels, as Sen2Cor reports it.
func (it *item) CloudCover() float64 { return it.High + it.Medium + it.Cirrus }

// Baseline changes of the Sentinel-2 ground segment (ESA).
var baselines = []struct {
	from time.Time
	name string
}{
	{time.Date(2022, 1, 25, 0, 0, 0, 0, time.UTC), "04.00"},
	{time.Date(2022, 12, 6, 0, 0, 0, 0, time.UTC), "05.09"},
	{time.Date(2023, 12, 13, 0, 0, 0, 0, time.UTC), "05.10"},
	{time.Date(2024, 7, 23, 0, 0, 0, 0, time.UTC), "05.11"},
}

// newItem draws the metadata of acquisition t: one item in five keeps the
// pre-2022 baseline 03.01 (no offset), the others carry the baseline of
// their date; of the 05.xx ones, 30 % have the offset already removed from
// the data (earthsearch:boa_offset_applied: true), the rest keep it and say
// so through raster:bands offset −0.1. 04.00 items keep the offset with no
// raster:bands, so only s2:processing_baseline tells.
func (sc *scene) newItem(t int) *item {
	d := sc.dates[t]
	rng := rngFor(sc.o.Seed, 3_000_000+uint64(t))
	plat := "A"
	if t%2 == 1 {
		plat = "B"
	}
	it := &item{
		ID:       fmt.Sprintf("S2%s_%s_%s_0_L2A", plat, sc.tileCode, d.Format("20060102")),
		Date:     d,
		Platform: "sentinel-2" + map[string]string{"A": "a", "B": "b"}[plat],
		Baseline: "03.01",
	}
	if rng.Float64() >= 0.2 {
		for _, b := range baselines {
			if !d.Before(b.from) {
				it.Baseline = b.name
			}
		}
	}
	switch {
	case it.Baseline == "03.01":
	case it.Baseline == "04.00":
		it.DNOffset = 1000
	case rng.Float64() < 0.3:
		it.Applied = true
	default:
		it.DNOffset, it.RasterOffset = 1000, true
	}
	return it
}

// band files of an item, in asset order.
var assets = []struct {
	key, file, title, common string
	gsd                      int
	wavelength, fwhm         float64
}{
	{"red", "B04.tif", "Red (band 4) - 10m", "red", 10, 0.665, 0.038},
	{"nir", "B08.tif", "NIR 1 (band 8) - 10m", "nir", 10, 0.842, 0.145},
	{"swir16", "B11.tif", "SWIR 1.6μm (band 11) - 20m", "swir16", 20, 1.61, 0.143},
	{"swir22", "B12.tif", "SWIR 2.2μm (band 12) - 20m", "swir22", 20, 2.19, 0.242},
	{"scl", "SCL.tif", "Scene classification map (SCL)", "", 20, 0, 0},
}

// itemDir is the item's folder relative to Out.
func itemDir(id string) string { return filepath.Join(Collection, id) }

// render draws and writes every acquisition, Workers at a time, each
// worker with its own renderer (buffers and GDAL objects).
func (sc *scene) render(ctx context.Context) ([]*item, error) {
	items := make([]*item, len(sc.dates))
	eg, ectx := errgroup.WithContext(ctx)
	jobs := make(chan int)
	for range sc.o.Workers {
		eg.Go(func() error {
			r, err := sc.newRenderer()
			if err != nil {
				return err
			}
			defer r.close()
			for t := range jobs {
				it, err := r.acquisition(t)
				if err != nil {
					return err
				}
				items[t] = it
			}
			return nil
		})
	}
	eg.Go(func() error {
		defer close(jobs)
		for t := range sc.dates {
			select {
			case jobs <- t:
			case <-ectx.Done():
				return ectx.Err()
			}
		}
		return nil
	})
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return items, nil
}

// renderer holds one worker's buffers and GDAL objects.
type renderer struct {
	sc                 *scene
	srs                *godal.SpatialRef
	red, nir, sw1, sw2 []uint16
	scl                []uint8
	refl               []pheno.Reflectance
	fieldOf            []int // surface → talhão index, −1 for background
}

func (sc *scene) newRenderer() (*renderer, error) {
	srs, err := godal.NewSpatialRefFromEPSG(sc.epsg)
	if err != nil {
		return nil, fmt.Errorf("open EPSG:%d: %w", sc.epsg, err)
	}
	n, m := sc.n, sc.n/2
	r := &renderer{sc: sc, srs: srs,
		red: make([]uint16, n*n), nir: make([]uint16, n*n),
		sw1: make([]uint16, m*m), sw2: make([]uint16, m*m), scl: make([]uint8, m*m),
		refl: make([]pheno.Reflectance, len(sc.surfaces)), fieldOf: make([]int, len(sc.surfaces)),
	}
	for i := range r.fieldOf {
		r.fieldOf[i] = -1
	}
	for k, f := range sc.fields {
		r.fieldOf[f.surf] = k
		if f.head != nil {
			r.fieldOf[f.surf+1] = k
		}
	}
	return r, nil
}

func (r *renderer) close() { r.srs.Close() }

// noiseAmp is the half-width of the triangular sensor noise, reflectance.
const noiseAmp = 0.003

// tri maps two 16-bit chunks of h (from bit k) to triangular noise in
// (−noiseAmp, noiseAmp).
func tri(h uint64, k uint) float64 {
	a := float64((h>>k)&0xffff) / 65536
	b := float64((h>>(k+16))&0xffff) / 65536
	return noiseAmp * (a + b - 1)
}

// Noise streams of the per-pixel sensor noise.
const (
	streamNoise10 = 10_000_000
	streamNoise20 = 20_000_000
)

// toDN converts reflectance to the stored DN with the item's offset;
// 0 is nodata, so valid pixels are at least 1.
func toDN(x float64, off int) uint16 {
	v := int(math.Round(x*10000)) + off
	return uint16(max(1, min(v, 65535)))
}

// pixel10 returns the noisy surface reflectance (red, nir) of 10 m pixel p
// on acquisition t before the atmosphere, and its clear surface (×gain).
func (sc *scene) pixel10(t, p int, refl []pheno.Reflectance) (red, nir float64, clear pheno.Reflectance) {
	R := refl[sc.cls[p]]
	g := float64(sc.gain[p])
	clear = pheno.Reflectance{Red: R.Red * g, NIR: R.NIR * g, SWIR1: R.SWIR1 * g, SWIR2: R.SWIR2 * g}
	h := hash(uint64(sc.o.Seed), streamNoise10+uint64(t), uint64(p))
	return clear.Red + tri(h, 0), clear.NIR + tri(h, 32), clear
}

// swir20 returns the noisy SWIR reflectances of 20 m pixel q given the sum
// of its four 10 m clear surfaces.
func (sc *scene) swir20(t, q int, s1, s2 float64) (float64, float64) {
	h := hash(uint64(sc.o.Seed), streamNoise20+uint64(t), uint64(q))
	return s1/4 + tri(h, 0), s2/4 + tri(h, 32)
}

// acquisition draws and writes acquisition t.
func (r *renderer) acquisition(t int) (*item, error) {
	sc := r.sc
	d := sc.dates[t]
	it := sc.newItem(t)
	sk := sc.newSky(t)
	for i, f := range sc.surfaces {
		r.refl[i] = f(d)
	}
	nf := len(sc.fields)
	it.masked, it.residue, it.nodata = make([]int, nf), make([]int, nf), make([]int, nf)
	var cnt [11]int
	m := sc.n / 2
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			cnt[r.pixel20(t, i, j, it, sk)]++
		}
	}
	it.setClassCover(cnt, m*m)
	if err := r.write(it); err != nil {
		return nil, err
	}
	return it, nil
}

// pixel20 draws 20 m pixel (i, j) of acquisition t and its four 10 m
// pixels, counts what the talhões lose to masks, and returns the pixel's
// SCL class (0 = no data).
func (r *renderer) pixel20(t, i, j int, it *item, sk *sky) uint8 {
	sc := r.sc
	n, m := sc.n, sc.n/2
	off := it.DNOffset
	q := i*m + j
	alpha, shadow, cirrus, nd := sk.at(q)
	var s1, s2, cr, cn float64
	water := 0
	flag := sk.flag(q)
	res := flag == 0 && sk.residue(q)
	for di := 0; di < 2; di++ {
		for dj := 0; dj < 2; dj++ {
			p := (2*i+di)*n + 2*j + dj
			if k := r.fieldOf[sc.cls[p]]; k >= 0 {
				switch {
				case nd:
					it.nodata[k]++
				case flag != 0:
					it.masked[k]++
				case res:
					it.residue[k]++
				}
			}
			if nd {
				r.red[p], r.nir[p] = 0, 0
				continue
			}
			red, nir, c := sc.pixel10(t, p, r.refl)
			r.red[p] = toDN(atm(red, alpha, shadow, cirrus, cloudTop.Red, cirrusSpec.Red), off)
			r.nir[p] = toDN(atm(nir, alpha, shadow, cirrus, cloudTop.NIR, cirrusSpec.NIR), off)
			s1 += c.SWIR1
			s2 += c.SWIR2
			cr += c.Red
			cn += c.NIR
			if sc.cls[p] == surfWater {
				water++
			}
		}
	}
	if nd {
		r.sw1[q], r.sw2[q], r.scl[q] = 0, 0, SCLNoData
		return 0
	}
	w1, w2 := sc.swir20(t, q, s1, s2)
	r.sw1[q] = toDN(atm(w1, alpha, shadow, cirrus, cloudTop.SWIR1, cirrusSpec.SWIR1), off)
	r.sw2[q] = toDN(atm(w2, alpha, shadow, cirrus, cloudTop.SWIR2, cirrusSpec.SWIR2), off)
	switch {
	case flag != 0:
	case water >= 2:
		flag = SCLWater
	case (cn-cr)/(cn+cr) >= 0.4:
		flag = SCLVegetation
	default:
		flag = SCLNotVeg
	}
	r.scl[q] = flag
	return flag
}

// setClassCover sets the item's no-data share of all pixels and its class
// shares of the valid ones, from the class counts of its 20 m pixels.
func (it *item) setClassCover(cnt [11]int, pixels int) {
	all := float64(pixels)
	valid := all - float64(cnt[0])
	pct := func(c int) float64 {
		if valid == 0 {
			return 0
		}
		return num.Round(100*float64(c)/valid, 3)
	}
	it.Nodata = num.Round(100*float64(cnt[0])/all, 3)
	it.High, it.Medium, it.Cirrus, it.Shadow = pct(cnt[SCLCloudHigh]), pct(cnt[SCLCloudMedium]), pct(cnt[SCLCirrus]), pct(cnt[SCLShadow])
	it.Veg, it.NotVeg, it.Water = pct(cnt[SCLVegetation]), pct(cnt[SCLNotVeg]), pct(cnt[SCLWater])
}

// write writes the item's assets as COGs.
func (r *renderer) write(it *item) error {
	sc := r.sc
	n, m := sc.n, sc.n/2
	dir := filepath.Join(sc.o.Out, itemDir(it.ID))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	gt10 := [6]float64{sc.x0, pixelM, 0, sc.y0, 0, -pixelM}
	gt20 := [6]float64{sc.x0, 2 * pixelM, 0, sc.y0, 0, -2 * pixelM}
	bufs := []any{r.red, r.nir, r.sw1, r.sw2, r.scl}
	for k, a := range assets {
		size, gt := n, gt10
		if a.gsd == 20 {
			size, gt = m, gt20
		}
		res := godal.Average
		if a.key == "scl" {
			res = godal.Nearest
		}
		path := filepath.Join(dir, a.file)
		if err := writeCOG(path, bufs[k], size, size, gt, r.srs, 0, sc.o.BlockSize, res); err != nil {
			return fmt.Errorf("item %s: %w", it.ID, err)
		}
	}
	return nil
}

// overviewCount is the number of 2× overviews that brings size down to one
// block, at least one so that every file has an overview.
func overviewCount(size, block int) int {
	c := 0
	for s := size; s > block; s = (s + 1) / 2 {
		c++
	}
	return max(c, 1)
}

// writeCOG writes buf (a []uint16, []uint8 or []float32 of w × h) as a
// Cloud-Optimized GeoTIFF: DEFLATE with the horizontal predictor, square
// tiles of block pixels, overviews down to one tile (at least one level)
// resampled with resampling, nodata set.
func writeCOG(path string, buf any, w, h int, gt [6]float64, srs *godal.SpatialRef, nodata float64, block int, resampling godal.ResamplingAlg) error {
	var dt godal.DataType
	predictor := "2"
	switch buf.(type) {
	case []uint16:
		dt = godal.UInt16
	case []uint8:
		dt = godal.Byte
	case []float32:
		dt, predictor = godal.Float32, "3"
	default:
		return fmt.Errorf("write %s: unsupported buffer %T", path, buf)
	}
	mem, err := godal.Create(godal.Memory, "", 1, dt, w, h)
	if err != nil {
		return fmt.Errorf("create in-memory raster for %s: %w", path, err)
	}
	defer mem.Close()
	if err := mem.SetGeoTransform(gt); err != nil {
		return fmt.Errorf("set geotransform of %s: %w", path, err)
	}
	if err := mem.SetSpatialRef(srs); err != nil {
		return fmt.Errorf("set CRS of %s: %w", path, err)
	}
	b := mem.Bands()[0]
	if err := b.SetNoData(nodata); err != nil {
		return fmt.Errorf("set nodata of %s: %w", path, err)
	}
	if err := b.Write(0, 0, buf, w, h); err != nil {
		return fmt.Errorf("fill %s: %w", path, err)
	}
	// Overviews built in memory and copied (the COG driver would otherwise
	// compute them through a temporary file: twice the time).
	levels := make([]int, overviewCount(max(w, h), block))
	for i := range levels {
		levels[i] = 1 << (i + 1)
	}
	if err := mem.BuildOverviews(godal.Levels(levels...), godal.Resampling(resampling)); err != nil {
		return fmt.Errorf("build overviews of %s: %w", path, err)
	}
	out, err := mem.Translate(path, []string{"-of", "COG",
		"-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=" + predictor,
		"-co", fmt.Sprintf("BLOCKSIZE=%d", block),
		"-co", "OVERVIEWS=FORCE_USE_EXISTING",
	})
	if err != nil {
		return fmt.Errorf("write COG %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}
