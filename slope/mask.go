package slope

import (
	"fmt"
	"math"
	"sort"

	"github.com/paulmach/orb"
)

// Rasterize returns a row-major mask of width × height pixels that is true
// where the pixel centre lies inside mp, on the north-up grid described by the
// GDAL geotransform gt (gt[0], gt[3]: corner of pixel (0,0); gt[1], gt[5]:
// pixel width and height; gt[2] and gt[4] must be 0). mp is in the grid's
// coordinates. Rings are combined with the even–odd rule, so holes are
// excluded; a centre exactly on a left edge is inside, on a right edge
// outside (the half-open rule GDAL's rasterizer uses).
func Rasterize(mp orb.MultiPolygon, gt [6]float64, width, height int) ([]bool, error) {
	if gt[2] != 0 || gt[4] != 0 {
		return nil, fmt.Errorf("rasterize: rotated geotransform %v: %w", gt, ErrBadInput)
	}
	if gt[1] <= 0 || gt[5] == 0 || width < 0 || height < 0 {
		return nil, fmt.Errorf("rasterize: geotransform %v on %d×%d pixels: %w", gt, width, height, ErrBadInput)
	}
	mask := make([]bool, width*height)
	type edge struct{ x1, y1, x2, y2 float64 }
	var edges []edge
	for _, poly := range mp {
		for _, ring := range poly {
			n := len(ring)
			for i := 0; i < n; i++ {
				p, q := ring[i], ring[(i+1)%n]
				if p[1] != q[1] {
					edges = append(edges, edge{p[0], p[1], q[0], q[1]})
				}
			}
		}
	}
	xs := make([]float64, 0, 16)
	for r := 0; r < height; r++ {
		y := gt[3] + (float64(r)+0.5)*gt[5]
		xs = xs[:0]
		for _, e := range edges {
			if (e.y1 > y) != (e.y2 > y) {
				xs = append(xs, e.x1+(y-e.y1)*(e.x2-e.x1)/(e.y2-e.y1))
			}
		}
		if len(xs) < 2 {
			continue
		}
		sort.Float64s(xs)
		row := mask[r*width : (r+1)*width]
		for k := 0; k+1 < len(xs); k += 2 {
			// Columns whose centre gt0 + (c+0.5)·gt1 lies in [xs[k], xs[k+1]).
			c0 := int(math.Ceil((xs[k]-gt[0])/gt[1] - 0.5))
			c1 := int(math.Ceil((xs[k+1]-gt[0])/gt[1] - 0.5)) // exclusive
			c0 = max(c0, 0)
			c1 = min(c1, width)
			for c := c0; c < c1; c++ {
				row[c] = true
			}
		}
	}
	return mask, nil
}
