package slope

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/airbusgeo/godal"
	"github.com/paulmach/orb"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/internal/testkit"
)

// BenchmarkHorn measures the pure Horn kernel on square windows.
func BenchmarkHorn(b *testing.B) {
	for _, n := range []int{256, 1024, 4096} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			gt := [6]float64{-50, arcsec, 0, -15, 0, -arcsec}
			z := synthHills(n, gt)
			dx, dy := make([]float64, n), make([]float64, n)
			for r := range n {
				dx[r], dy[r] = PixelSizeM(-15-float64(r)*arcsec, arcsec, arcsec, WGS84)
			}
			b.ReportAllocs()
			b.SetBytes(int64(4 * n * n))
			b.ResetTimer()
			for b.Loop() {
				if _, err := Horn(z, n, n, dx, dy); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// mosaic writes a 2×2 VRT mosaic of synthetic 1″ COG tiles, each tile
// degrees on a side, with its north-west corner at (lon0, lat0), and returns
// the VRT path.
func mosaic(tb testing.TB, dir string, lon0, lat0, tile float64) string {
	tb.Helper()
	n := int(math.Round(tile * 3600))
	var tiles []string
	for i := range 2 {
		for j := range 2 {
			gt := [6]float64{lon0 + float64(j)*tile, arcsec, 0, lat0 - float64(i)*tile, 0, -arcsec}
			tiles = append(tiles, writeTestDEM(tb, dir, fmt.Sprintf("tile_%d_%d.tif", i, j), synthHills(n, gt), n, n, gt, 4326))
		}
	}
	vrt := filepath.Join(dir, "mosaic.vrt")
	ds, err := godal.BuildVRT(vrt, tiles, nil)
	if err != nil {
		tb.Fatalf("BuildVRT: %v", err)
	}
	if err := ds.Close(); err != nil {
		tb.Fatalf("close VRT: %v", err)
	}
	return vrt
}

// randomFields returns n talhões: irregular hexagons of 300–700 m radius
// (about 25–130 ha) at random inside the box, in lon/lat.
func randomFields(n int, lon0, lat0, size float64) []grid.Field {
	rng := rand.New(rand.NewPCG(4, 2))
	fs := make([]grid.Field, n)
	for i := range fs {
		lat := lat0 - 0.02 - rng.Float64()*(size-0.04)
		lon := lon0 + 0.02 + rng.Float64()*(size-0.04)
		rM := 300 + 400*rng.Float64()
		hex := hexagon(rM)
		ring := make(orb.Ring, len(hex))
		for k, p := range hex {
			ring[k] = orb.Point{lon + p[0]/(111320*math.Cos(lat*math.Pi/180)), lat + p[1]/110570}
		}
		fs[i] = grid.Field{ID: fmt.Sprintf("b%05d", i), Geometry: orb.MultiPolygon{{ring}}}
	}
	return fs
}

// BenchmarkFields10k: 10,000 talhões over one VRT mosaic of four 1″ COG
// tiles (0.25° each, 900×900 px), through DEM.Field; reports ns per talhão,
// sequentially and with one goroutine per core sharing the DEM.
func BenchmarkFields10k(b *testing.B) {
	const lon0, lat0, tile, nFields = -48.0, -15.0, 0.25, 10000
	vrt := mosaic(b, b.TempDir(), lon0, lat0, tile)
	fields := randomFields(nFields, lon0, lat0, 2*tile)
	d, err := Open(context.Background(), vrt)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := testkit.CPUTime()
			b.ResetTimer()
			for b.Loop() {
				var wg sync.WaitGroup
				next := make(chan int)
				for range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range next {
							if _, err := d.Field(ctx, fields[i]); err != nil {
								b.Error(err)
							}
						}
					}()
				}
				for i := range fields {
					next <- i
				}
				close(next)
				wg.Wait()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nFields), "ns/talhão")
			// Process CPU time per talhão: robust to a shared, loaded machine
			// where wall time also counts other people's work.
			b.ReportMetric(float64((testkit.CPUTime()-cpu0).Nanoseconds())/float64(b.N*nFields), "cpu-ns/talhão")
		})
	}
}
