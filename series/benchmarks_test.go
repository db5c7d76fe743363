package series

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/paulmach/orb"
)

// benchTile is a Sentinel-2-sized synthetic archive: one 4096×4096 10 m
// tile (red, nir) with 2048×2048 20 m swir16, swir22 and SCL, 512-pixel
// DEFLATE blocks, dates every 5 days, and a few hundred talhões scattered
// over it.
type benchTile struct {
	dir     string
	catalog string
	dates   []string
	grids   []grid.Grid
	cells   int
	utm     [][2]float64 // every cell centre in EPSG:32721
	lonlat  []orb.Point
	assets  []string // asset keys
	block   int
}

// benchParams size a fixture: 10 m side in pixels, block side, talhões.
type benchParams struct{ size, block, fields int }

var (
	s2Tile    = benchParams{size: 4096, block: 512, fields: 300}
	smallTile = benchParams{size: 384, block: 256, fields: 8}
)

const (
	benchDates   = 24
	benchX0      = 600000.0
	benchY0      = 8700000.0
	benchSRS     = "EPSG:32721"
	benchVariant = 4 // distinct rasters; other dates are copies
)

// writeBenchRaster writes a size×size tiled DEFLATE GeoTIFF in strips.
func writeBenchRaster(tb testing.TB, path string, size, block int, res float64, dtype godal.DataType, seed uint64, scl bool) {
	tb.Helper()
	ds, err := godal.Create(godal.GTiff, path, 1, dtype, size, size, godal.CreationOption(
		"TILED=YES", fmt.Sprintf("BLOCKXSIZE=%d", block), fmt.Sprintf("BLOCKYSIZE=%d", block), "COMPRESS=DEFLATE", "PREDICTOR=2"))
	if err != nil {
		tb.Fatal(err)
	}
	sr, _ := godal.NewSpatialRef(benchSRS)
	_ = ds.SetSpatialRef(sr)
	sr.Close()
	_ = ds.SetGeoTransform([6]float64{benchX0, res, 0, benchY0, 0, -res})
	_ = ds.Bands()[0].SetNoData(0)
	rng := rand.New(rand.NewPCG(seed, 7))
	ph := rng.Float64() * 6
	strip := make([]uint16, size*block)
	for y0 := 0; y0 < size; y0 += block {
		sh := min(block, size-y0)
		for y := 0; y < sh; y++ {
			for x := 0; x < size; x++ {
				fx, fy := float64(x)*res, float64(y0+y)*res
				v := math.Sin(fx/900+ph)*math.Cos(fy/1300-ph) + 0.3*math.Sin(fx/170+fy/230)
				if scl {
					// Clouds (9) and shadows (3) over ~25 % of the tile.
					switch {
					case v > 0.75:
						strip[y*size+x] = 9
					case v < -0.95:
						strip[y*size+x] = 3
					default:
						strip[y*size+x] = 4
					}
					continue
				}
				strip[y*size+x] = uint16(2000 + 900*v + float64(rng.IntN(120)))
			}
		}
		if err := ds.Bands()[0].Write(0, y0, strip[:size*sh], size, sh); err != nil {
			tb.Fatal(err)
		}
	}
	if err := ds.Close(); err != nil {
		tb.Fatal(err)
	}
}

func copyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func newBenchTile(tb testing.TB, dir string, bp benchParams) *benchTile {
	tb.Helper()
	registerGDAL()
	bt := &benchTile{dir: dir, block: bp.block, assets: []string{"red", "nir", "swir16", "swir22", "scl"}}
	type spec struct {
		size int
		res  float64
		dt   godal.DataType
		scl  bool
	}
	specs := map[string]spec{
		"red": {bp.size, 10, godal.UInt16, false}, "nir": {bp.size, 10, godal.UInt16, false},
		"swir16": {bp.size / 2, 20, godal.UInt16, false}, "swir22": {bp.size / 2, 20, godal.UInt16, false},
		"scl": {bp.size / 2, 20, godal.Byte, true},
	}
	_, err := os.Stat(filepath.Join(dir, "catalog.json"))
	reuse := err == nil
	for v := 0; v < benchVariant && !reuse; v++ {
		for k, s := range specs {
			writeBenchRaster(tb, filepath.Join(dir, fmt.Sprintf("v%d_%s.tif", v, k)), s.size, bp.block, s.res, s.dt, uint64(v*10+len(k)), s.scl)
		}
	}
	src, _ := godal.NewSpatialRef(benchSRS)
	dst, _ := godal.NewSpatialRefFromEPSG(4326)
	tr, err := godal.NewTransform(src, dst)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { tr.Close(); src.Close(); dst.Close() }()
	_ = reuse
	lonlatOf := func(x, y float64) orb.Point {
		xs, ys := []float64{x}, []float64{y}
		if err := tr.TransformEx(xs, ys, nil, nil); err != nil {
			tb.Fatal(err)
		}
		return orb.Point{xs[0], ys[0]}
	}
	ext := float64(bp.size) * 10
	bb := orb.Bound{Min: lonlatOf(benchX0, benchY0-ext), Max: lonlatOf(benchX0+ext, benchY0)}
	bb = bb.Extend(lonlatOf(benchX0, benchY0)).Extend(lonlatOf(benchX0+ext, benchY0-ext))
	var feats []map[string]any
	start := mustTime("2023-09-01")
	for d := 0; d < benchDates; d++ {
		date := start.AddDate(0, 0, 5*d).Format("2006-01-02")
		bt.dates = append(bt.dates, date)
		assets := map[string]any{}
		for _, k := range bt.assets {
			name := fmt.Sprintf("d%02d_%s.tif", d, k)
			if !reuse {
				copyFile(tb, filepath.Join(dir, fmt.Sprintf("v%d_%s.tif", d%benchVariant, k)), filepath.Join(dir, name))
			}
			assets[k] = map[string]any{"href": name}
		}
		baseline := "03.01"
		if d%2 == 1 {
			baseline = "05.10"
		}
		feats = append(feats, item("S2_bench_"+date, "sentinel-2-l2a", date+"T13:40:00Z", map[string]any{"s2:processing_baseline": baseline, "proj:epsg": 32721}, bb, assets))
	}
	for v := 0; v < benchVariant; v++ {
		for k := range specs {
			os.Remove(filepath.Join(dir, fmt.Sprintf("v%d_%s.tif", v, k)))
		}
	}
	bt.catalog = filepath.Join(dir, "catalog.json")
	writeJSON(tb, bt.catalog, collection(feats...))

	// Talhões: squares of 500–1500 m with cells every 150–300 m.
	rng := rand.New(rand.NewPCG(42, 1))
	for f := 0; f < bp.fields; f++ {
		side := 500 + rng.Float64()*1000
		step := 150 + rng.Float64()*150
		x0 := benchX0 + 200 + rng.Float64()*(ext-side-400)
		y0 := benchY0 - 200 - rng.Float64()*(ext-side-400)
		id := fmt.Sprintf("t%03d", f)
		g := grid.Grid{Field: grid.Field{ID: id}, EPSG: 32721}
		corners := []orb.Point{lonlatOf(x0, y0), lonlatOf(x0+side, y0), lonlatOf(x0+side, y0-side), lonlatOf(x0, y0-side)}
		g.Field.Geometry = orb.MultiPolygon{{orb.Ring{corners[0], corners[1], corners[2], corners[3], corners[0]}}}
		n := 0
		for y := y0 - step/2; y > y0-side; y -= step {
			for x := x0 + step/2; x < x0+side; x += step {
				p := lonlatOf(x, y)
				g.Cells = append(g.Cells, grid.Cell{FieldID: id, ID: fmt.Sprintf("c%03d", n), Centre: p})
				bt.utm = append(bt.utm, [2]float64{x, y})
				bt.lonlat = append(bt.lonlat, p)
				n++
			}
		}
		bt.cells += n
		bt.grids = append(bt.grids, g)
	}
	return bt
}

// peakRSSMB is the process's peak resident set (Go heap and GDAL's C
// memory together), in MiB.
func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Maxrss) / 1024
}

var childCPUSeen time.Duration

// childCPUTime returns the CPU time of waited-for child processes since the
// previous call.
func childCPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	t := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	d := t - childCPUSeen
	childCPUSeen = t
	return d
}

// heapSysMB samples runtime.MemStats.HeapSys while f runs and returns the
// largest value seen, in MiB.
func heapSysMB(f func()) float64 {
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapSys)
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return float64(peak) / (1 << 20)
}

// boundBlocks is the read+decode bound: open each asset once and decode,
// in its native type, only the blocks that hold cell centres.
func boundBlocks(tb testing.TB, bt *benchTile, dates int) {
	buf16 := make([]uint16, bt.block*bt.block)
	buf8 := make([]uint8, bt.block*bt.block)
	for d := 0; d < dates; d++ {
		for _, k := range bt.assets {
			ds, err := godal.Open(filepath.Join(bt.dir, fmt.Sprintf("d%02d_%s.tif", d, k)), godal.RasterOnly())
			if err != nil {
				tb.Fatal(err)
			}
			gt, _ := ds.GeoTransform()
			band := ds.Bands()[0]
			st := band.Structure()
			blocks := map[[2]int]bool{}
			for _, p := range bt.utm {
				c, r := int((p[0]-gt[0])/gt[1]), int((p[1]-gt[3])/gt[5])
				blocks[[2]int{c / st.BlockSizeX, r / st.BlockSizeY}] = true
			}
			for b := range blocks {
				w, h := st.ActualBlockSize(b[0], b[1])
				var buf any = buf16[:w*h]
				if st.DataType == godal.Byte {
					buf = buf8[:w*h]
				}
				if err := band.Read(b[0]*st.BlockSizeX, b[1]*st.BlockSizeY, buf, w, h); err != nil {
					tb.Fatal(err)
				}
			}
			ds.Close()
		}
	}
}

// boundWindow reads, per asset, one window spanning all cell centres.
func boundWindow(tb testing.TB, bt *benchTile, dates int) {
	for d := 0; d < dates; d++ {
		for _, k := range bt.assets {
			ds, err := godal.Open(filepath.Join(bt.dir, fmt.Sprintf("d%02d_%s.tif", d, k)), godal.RasterOnly())
			if err != nil {
				tb.Fatal(err)
			}
			gt, _ := ds.GeoTransform()
			band := ds.Bands()[0]
			x0, y0, x1, y1 := math.MaxInt, math.MaxInt, -1, -1
			for _, p := range bt.utm {
				c, r := int((p[0]-gt[0])/gt[1]), int((p[1]-gt[3])/gt[5])
				x0, y0, x1, y1 = min(x0, c), min(y0, r), max(x1, c), max(y1, r)
			}
			w, h := x1-x0+1, y1-y0+1
			var buf any = make([]uint16, w*h)
			if band.Structure().DataType == godal.Byte {
				buf = make([]uint8, w*h)
			}
			if err := band.Read(x0, y0, buf, w, h); err != nil {
				tb.Fatal(err)
			}
			ds.Close()
		}
	}
}

// plainGDAL is the plain way: gdallocationinfo per scene and asset, with
// every cell centre (lon/lat) on stdin.
func plainGDAL(tb testing.TB, bt *benchTile, dates int) {
	var in strings.Builder
	for _, p := range bt.lonlat {
		fmt.Fprintf(&in, "%.8f %.8f\n", p[0], p[1])
	}
	for d := 0; d < dates; d++ {
		for _, k := range bt.assets {
			cmd := exec.Command("gdallocationinfo", "-valonly", "-wgs84", filepath.Join(bt.dir, fmt.Sprintf("d%02d_%s.tif", d, k)))
			cmd.Stdin = strings.NewReader(in.String())
			out, err := cmd.Output()
			if err != nil {
				tb.Fatal(err)
			}
			if n := strings.Count(string(out), "\n"); n != len(bt.lonlat) {
				tb.Fatalf("gdallocationinfo: %d lines for %d points", n, len(bt.lonlat))
			}
		}
	}
}

func sampleBench(tb testing.TB, cat *Catalog, bt *benchTile, workers int, to time.Time) []Obs {
	obs, st, err := Sample(context.Background(), cat, bt.grids, Options{Workers: workers, To: to})
	if err != nil {
		tb.Fatal(err)
	}
	if st.ScenesRead == 0 || len(st.Problems) > 0 {
		tb.Fatalf("stats %+v", st)
	}
	return obs
}

// BenchmarkSample measures Sample on a Sentinel-2-sized tile against the
// read+decode bound and the plain gdallocationinfo way. Metrics:
// cellobs/s (cell × date observations per second), peak-heap-MB (Go
// HeapSys), peak-rss-MB (whole process, GDAL included), and ratios.
func BenchmarkSample(b *testing.B) {
	if testing.Short() {
		b.Skip("large fixture")
	}
	benchSample(b, s2Tile, true)
}

// BenchmarkSampleSmallScene is the same on small scenes (384 × 384 at
// 10 m, 256-pixel blocks, 8 talhões), where one window read may beat
// block reads: the bound is the faster of the two.
func BenchmarkSampleSmallScene(b *testing.B) {
	benchSample(b, smallTile, false)
}

func benchSample(b *testing.B, bp benchParams, plain bool) {
	t0 := time.Now()
	// MANEJO_SERIES_BENCH_DIR keeps the rasters between runs (while
	// tuning); by default they live in a temporary directory.
	dir := os.Getenv("MANEJO_SERIES_BENCH_DIR")
	if dir == "" || bp != s2Tile {
		dir = b.TempDir()
	}
	bt := newBenchTile(b, dir, bp)
	b.Logf("fixture: %d talhões, %d cells, %d dates, built in %v", len(bt.grids), bt.cells, len(bt.dates), time.Since(t0).Round(time.Millisecond))
	cat, errs := LoadCatalog(context.Background(), bt.catalog, CatalogOptions{})
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	allDates := time.Time{}
	nobs := float64(bt.cells * len(bt.dates))
	w := runtime.GOMAXPROCS(0)
	b.Run(fmt.Sprintf("Sample/workers=%d", w), func(b *testing.B) {
		b.ReportAllocs()
		var heap float64
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			heap = max(heap, heapSysMB(func() { sampleBench(b, cat, bt, w, allDates) }))
		}
		b.ReportMetric(nobs*float64(b.N)/b.Elapsed().Seconds(), "cellobs/s")
		b.ReportMetric(heap, "peak-heap-MB")
		b.ReportMetric(peakRSSMB(), "peak-rss-MB")
	})
	// Ratios measured in one run, one goroutine each, alternating: the
	// bound is the faster of block reads and one window read.
	b.Run("Ratio/SampleOverBound", func(b *testing.B) {
		// Each iteration runs rounds alternated passes of the three
		// programs and keeps each one's fastest pass (wall and CPU apart):
		// the minimum is the estimate least disturbed by other load.
		const rounds = 2
		var ts, tb, tw, cs, cb, cw time.Duration
		for i := 0; i < b.N; i++ {
			best := func() [6]time.Duration {
				m := [6]time.Duration{}
				for k := range m {
					m[k] = time.Duration(math.MaxInt64)
				}
				timed := func(f func(), wall, cpu *time.Duration) {
					c0, w0 := testkit.CPUTime(), time.Now()
					f()
					*wall = min(*wall, time.Since(w0))
					*cpu = min(*cpu, testkit.CPUTime()-c0)
				}
				for r := 0; r < rounds; r++ {
					timed(func() { boundBlocks(b, bt, len(bt.dates)) }, &m[0], &m[1])
					timed(func() { boundWindow(b, bt, len(bt.dates)) }, &m[2], &m[3])
					timed(func() { sampleBench(b, cat, bt, 1, allDates) }, &m[4], &m[5])
				}
				return m
			}()
			tb, cb, tw, cw, ts, cs = tb+best[0], cb+best[1], tw+best[2], cw+best[3], ts+best[4], cs+best[5]
		}
		n := float64(b.N)
		b.ReportMetric(ts.Seconds()/min(tb, tw).Seconds(), "sample/bound")
		b.ReportMetric(cs.Seconds()/min(cb, cw).Seconds(), "sample/bound-cpu")
		b.ReportMetric(tb.Seconds()/n, "bound-blocks-s")
		b.ReportMetric(tw.Seconds()/n, "bound-window-s")
		b.ReportMetric(ts.Seconds()/n, "sample-s")
		b.ReportMetric(cb.Seconds()/n, "bound-blocks-cpu-s")
		b.ReportMetric(cw.Seconds()/n, "bound-window-cpu-s")
		b.ReportMetric(cs.Seconds()/n, "sample-cpu-s")
		b.ReportMetric(nobs*n/ts.Seconds(), "sample-cellobs/s")
	})
	b.Run("Ratio/GdallocationinfoOverSample", func(b *testing.B) {
		if !plain {
			b.Skip("measured on the large tile")
		}
		if _, err := exec.LookPath("gdallocationinfo"); err != nil {
			b.Skip("gdallocationinfo not installed")
		}
		// The plain way on the first 4 dates, same points.
		const nd = 4
		to := mustTime(bt.dates[nd-1])
		var tp, ts, cp, cs time.Duration
		childCPUTime() // reset
		for i := 0; i < b.N; i++ {
			s := time.Now()
			plainGDAL(b, bt, nd)
			tp += time.Since(s)
			cp += childCPUTime() // the gdallocationinfo processes
			s, c := time.Now(), testkit.CPUTime()
			sampleBench(b, cat, bt, 1, to)
			ts += time.Since(s)
			cs += testkit.CPUTime() - c
		}
		b.ReportMetric(tp.Seconds()/ts.Seconds(), "plain/sample")
		b.ReportMetric(cp.Seconds()/cs.Seconds(), "plain/sample-cpu")
		b.ReportMetric(tp.Seconds()/float64(b.N), "plain-s")
		b.ReportMetric(ts.Seconds()/float64(b.N), "sample-s")
	})
}
