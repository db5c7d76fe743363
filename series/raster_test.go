package series

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airbusgeo/godal"
)

// TestRemoteWindows checks the windows a remote band is read in: every
// cell in exactly one window, no window reaching a block without cells,
// spanning two block rows or more than maxBlocks blocks, and the windows in descending order
// of their first block (so GDAL's /vsicurl/ never sees a read start where
// its previous fetch ended, which makes it fetch ahead).
func TestRemoteWindows(t *testing.T) {
	const bw, bh, nx, ny = 512, 512, 4, 4
	rng := rand.New(rand.NewPCG(26, 1))
	for round := range 300 {
		// A random set of blocks, each with random cells.
		var cells [][2]int
		blocks := map[[2]int]*window{}
		for by := range ny {
			for bx := range nx {
				if rng.IntN(3) == 0 {
					continue
				}
				w := emptyWindow()
				for range 1 + rng.IntN(5) {
					c, r := bx*bw+rng.IntN(bw), by*bh+rng.IntN(bh)
					w.add(c, r)
					cells = append(cells, [2]int{c, r})
				}
				blocks[[2]int{bx, by}] = w
			}
		}
		maxBlocks := 1 + round%5
		wins := remoteWindows(blocks, maxBlocks)
		for _, c := range cells {
			n := 0
			for _, w := range wins {
				if w.holds(c[0], c[1]) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("round %d: cell %v in %d windows %v", round, c, n, wins)
			}
		}
		prev := [2]int{nx, ny}
		for _, w := range wins {
			x0, y0, x1, y1 := w.x0/bw, w.y0/bh, w.x1/bw, w.y1/bh
			if y1 != y0 || x1-x0+1 > maxBlocks {
				t.Fatalf("round %d: window %v spans %d×%d blocks, max %d", round, w, x1-x0+1, y1-y0+1, maxBlocks)
			}
			for by := y0; by <= y1; by++ {
				for bx := x0; bx <= x1; bx++ {
					if blocks[[2]int{bx, by}] == nil {
						t.Fatalf("round %d: window %v decodes block %d,%d, which holds no cell", round, w, bx, by)
					}
				}
			}
			if y0 > prev[1] || (y0 == prev[1] && x0 >= prev[0]) {
				t.Fatalf("round %d: window %v (first block %d,%d) after first block %v: not descending", round, w, x0, y0, prev)
			}
			prev = [2]int{x0, y0}
		}
	}
	// A full row of four blocks and the same row below: with four blocks
	// a window, one window a row, the lower first; a 2×2 square is one
	// window a row.
	full := map[[2]int]*window{}
	for bx := range 4 {
		for by := range 2 {
			full[[2]int{bx, by}] = &window{bx * bw, by * bh, bx*bw + 1, by*bh + 1}
		}
	}
	if w := remoteWindows(full, 4); len(w) != 2 || w[0].y0 != bh || w[1].y0 != 0 {
		t.Errorf("two rows of four blocks: windows %v, want one a row, the lower first", w)
	}
	sq := map[[2]int]*window{{0, 0}: {0, 0, 1, 1}, {1, 0}: {bw, 0, bw + 1, 1}, {0, 1}: {0, bh, 1, bh + 1}, {1, 1}: {bw, bh, bw + 1, bh + 1}}
	if w := remoteWindows(sq, 4); len(w) != 2 || w[0] != (window{0, bh, bw + 1, bh + 1}) || w[1] != (window{0, 0, bw + 1, 1}) {
		t.Errorf("2×2 blocks: windows %v, want one a row, the lower first", w)
	}
}

// TestRemoteBandOneRoundTrip (issue 26): a remote band whose cells lie in
// two rows of tiles is read in two windows (remoteWindows), which go out
// at once: on a loopback HTTP server that answers every read after
// latency, the band's two ranged GETs start within half of it of each
// other (read one after the other, the second starts a whole latency
// after the first), and the band costs exactly those two GETs — the
// second handle's open is served from GDAL's range cache. The values read
// are the file's.
func TestRemoteBandOneRoundTrip(t *testing.T) {
	const latency = 300 * time.Millisecond
	// Cells in tiles (3, 2) and (3, 3).
	cells := [][2]int{{400, 300}, {450, 500}}
	var mu sync.Mutex
	var starts []time.Time
	r, ro, set, counting := remoteNoiseBand(t, 512, 2, latency, cells, func() func() {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		return func() {}
	})
	counting.Store(true)
	if err := r.readPixels(context.Background(), ro, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	counting.Store(false)
	mu.Lock()
	defer mu.Unlock()
	for i, c := range cells {
		if ro.val[i] != set[c] {
			t.Errorf("cell %v: %v, want the file's %v", c, ro.val[i], set[c])
		}
	}
	if len(starts) != 2 {
		t.Fatalf("the band took %d GETs; want 2 (one a window, the second open from GDAL's cache)", len(starts))
	}
	if d := starts[1].Sub(starts[0]); d > latency/2 {
		t.Errorf("the band's second window started %s after the first; want both at once (within %s)", d.Round(time.Millisecond), latency/2)
	}
}

// TestRemoteBandHandlesBound: a remote band whose cells lie in six rows of
// tiles (six windows, no two sharing one of GDAL's chunks) is read through
// at most 4 handles at once (maxBandHandles): a loopback HTTP server that holds
// every read for latency never serves more than 4 of its GETs at once
// (README, --io-concurrency: what one scene may send at once). The values
// read are the file's.
func TestRemoteBandHandlesBound(t *testing.T) {
	var cells [][2]int
	var idx []int
	for i := range 6 { // one cell in each row of tiles, column 3
		cells, idx = append(cells, [2]int{400, 128*i + 60}), append(idx, i)
	}
	var busy, peak, gets atomic.Int64
	r, ro, set, counting := remoteNoiseBand(t, 768, 3, 300*time.Millisecond, cells, func() func() {
		gets.Add(1)
		n := busy.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		return func() { busy.Add(-1) }
	})
	counting.Store(true)
	if err := r.readPixels(context.Background(), ro, idx); err != nil {
		t.Fatal(err)
	}
	counting.Store(false)
	for i := range idx {
		if c := [2]int{ro.col[i], ro.row[i]}; ro.val[i] != set[c] {
			t.Errorf("cell %v: %v, want the file's %v", c, ro.val[i], set[c])
		}
	}
	t.Logf("%d GETs, at most %d at once", gets.Load(), peak.Load())
	if gets.Load() < 6 {
		t.Fatalf("the band took %d GETs; want one a window (6): the test reads no window after the open", gets.Load())
	}
	if peak.Load() > 4 { // the README's figure
		t.Errorf("%d of the band's GETs were served at once; want at most 4, as the README says", peak.Load())
	}
}

// remoteNoiseBand writes a size × size UInt16 band of noise (seeded;
// incompressible: the open's 32 KB hold no tile of the last rows) in
// 128-px tiles, serves it from a loopback HTTP server that answers every
// read after latency, opens it through /vsicurl/ and returns a reader, the
// band's role at cells and the file's values. Once counting is set, onGet
// is called as each GET arrives and what it returns as its answer leaves.
func remoteNoiseBand(t *testing.T, size int, seed uint64, latency time.Duration, cells [][2]int, onGet func() func()) (*reader, *role, map[[2]int]float64, *atomic.Bool) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "band.tif")
	rng := rand.New(rand.NewPCG(26, seed))
	set := map[[2]int]float64{}
	for y := range size {
		for x := range size {
			set[[2]int{x, y}] = float64(rng.IntN(60000))
		}
	}
	writeTiled(t, path, size, 128, set)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	counting := &atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if counting.Load() && r.Method == http.MethodGet {
			defer onGet()()
		}
		time.Sleep(latency)
		http.ServeContent(w, r, "band.tif", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	r := &reader{cloudCfg: cloudConfig, log: &ioLog{}}
	src := "/vsicurl/" + srv.URL + "/band.tif"
	f, _, err := r.open(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.ds.Close() })
	ro := &role{path: src, asset: Asset{Band: 1}, ds: f, band: f.ds.Bands()[0], val: make([]float64, len(cells))}
	for _, c := range cells {
		ro.col, ro.row = append(ro.col, c[0]), append(ro.row, c[1])
	}
	return r, ro, set, counting
}

// writeTiled writes a size × size UInt16 GeoTIFF at path (10 m pixels of
// UTM 21S), tiles of block pixels, uncompressed, with the pixel values set.
func writeTiled(t *testing.T, path string, size, block int, set map[[2]int]float64) {
	t.Helper()
	registerGDAL()
	ds, err := godal.Create(godal.GTiff, path, 1, godal.UInt16, size, size,
		godal.CreationOption("TILED=YES", fmt.Sprintf("BLOCKXSIZE=%d", block), fmt.Sprintf("BLOCKYSIZE=%d", block)))
	if err != nil {
		t.Fatal(err)
	}
	sr, err := godal.NewSpatialRefFromEPSG(32721)
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	if err := ds.SetSpatialRef(sr); err != nil {
		t.Fatal(err)
	}
	if err := ds.SetGeoTransform([6]float64{600000, 10, 0, 8700000, 0, -10}); err != nil {
		t.Fatal(err)
	}
	buf := make([]uint16, size*size)
	for k, v := range set {
		buf[k[1]*size+k[0]] = uint16(v)
	}
	if err := ds.Bands()[0].Write(0, 0, buf, size, size); err != nil {
		t.Fatal(err)
	}
	if err := ds.Close(); err != nil {
		t.Fatal(err)
	}
}
