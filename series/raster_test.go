package series

import (
	"math/rand/v2"
	"testing"
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
