package series

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/airbusgeo/godal"
)

// TestBlockMetaConcurrent reads every block's offset and size of one
// tiled GeoTIFF from many goroutines at once, each through its own
// dataset, and wants each value the file's tile table holds (tileTable):
// blockMeta must not return a number GDAL formatted for another call
// (see its doc). Without the thread held, this fails in well under a
// second on 2 cores, quiet or loaded.
func TestBlockMetaConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiled.tif")
	const size, block = 512, 16 // 1024 blocks
	writeTiled(t, path, size, block, map[[2]int]float64{{3, 5}: 7})
	offs, sizes := tileTable(t, path)
	const nb = size / block
	if len(offs) != nb*nb || len(sizes) != nb*nb {
		t.Fatalf("tile table: %d offsets, %d sizes; want %d", len(offs), len(sizes), nb*nb)
	}
	const workers, rounds = 8, 20
	var wrong, reads atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ds, err := godal.Open(path, godal.RasterOnly())
			if err != nil {
				t.Error(err)
				return
			}
			defer ds.Close()
			b := ds.Bands()[0]
			for r := range rounds {
				for i := range nb * nb {
					k := (i + w*131 + r*17) % (nb * nb) // each worker its own order
					x, y := k%nb, k/nb
					reads.Add(2)
					if got := blockMeta(b, "OFFSET", x, y); got != offs[k] {
						if wrong.Add(1) <= 5 {
							t.Errorf("block %d,%d offset %d; want %d", x, y, got, offs[k])
						}
					}
					if got := blockMeta(b, "SIZE", x, y); got != sizes[k] {
						if wrong.Add(1) <= 5 {
							t.Errorf("block %d,%d size %d; want %d", x, y, got, sizes[k])
						}
					}
				}
				if wrong.Load() > 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	if n := wrong.Load(); n > 0 {
		t.Errorf("%d of %d metadata reads returned another call's number", n, reads.Load())
	}
	t.Logf("%d metadata reads", reads.Load())
}
