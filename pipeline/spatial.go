package pipeline

import (
	"math"
	"sort"

	"github.com/manejo/manejo/grid"
	"github.com/paulmach/orb"
)

// hilbertOrder is the order of the Hilbert curve that spatial keys use:
// 2¹⁶ × 2¹⁶ positions over the square a frame covers.
const hilbertOrder = 16

// frame is the square, in local metres east and north of a corner, over
// which spatial keys run: the bounding square of a set of talhões.
// Cutting a Hilbert curve over it into 4ᵏ equal runs gives its quadrants,
// so the shards and groups of a portfolio that covers one image tile are
// the tile's quadrants, not strips that cross every block of it.
type frame struct {
	lon0, lat0, kx, side float64
}

// frameOf is the bounding square of the talhões' centres (a point, for
// one talhão).
func frameOf(fields []grid.Field) frame {
	var b orb.Bound
	for i, f := range fields {
		c := f.Geometry.Bound().Center()
		if i == 0 {
			b = orb.Bound{Min: c, Max: c}
		}
		b = b.Extend(c)
	}
	kx := math.Cos(b.Center()[1] * math.Pi / 180) // degrees of longitude to degrees of latitude
	return frame{lon0: b.Min[0], lat0: b.Min[1], kx: kx, side: max((b.Max[0]-b.Min[0])*kx, b.Max[1]-b.Min[1], 1e-9)}
}

// key is the position of (lon, lat) along the Hilbert curve over the
// frame. Points close along the curve are close on the ground, and every
// stretch of the curve stays in a compact area.
func (fr frame) key(lon, lat float64) uint64 {
	const n = 1 << hilbertOrder
	cell := func(v float64) uint64 {
		c := math.Floor(v / fr.side * n)
		if math.IsNaN(c) || c < 0 {
			return 0
		}
		return uint64(min(c, n-1))
	}
	return hilbertKey(cell((lon-fr.lon0)*fr.kx), cell(lat-fr.lat0))
}

// hilbertKey is the position of the cell (x, y) of the 2¹⁶ × 2¹⁶ grid
// along the Hilbert curve through it.
func hilbertKey(x, y uint64) uint64 {
	const n = 1 << hilbertOrder
	var d uint64
	for s := uint64(n / 2); s > 0; s /= 2 {
		var rx, ry uint64
		if x&s != 0 {
			rx = 1
		}
		if y&s != 0 {
			ry = 1
		}
		d += s * s * ((3 * rx) ^ ry)
		// Rotate the quadrant so the curve stays continuous.
		if ry == 0 {
			if rx == 1 {
				x, y = n-1-x, n-1-y
			}
			x, y = y, x
		}
	}
	return d
}

// placed is a talhão with its spatial key (the Hilbert key of the centre
// of its bounding box in the talhões' frame) and its weight: its estimated cells (area over the
// legal cell size of its area class, at least 1).
type placed struct {
	field  grid.Field
	key    uint64
	weight float64
}

// spatialOrder returns the talhões sorted by their spatial key, then id:
// an order that depends on the set of talhões alone (their frame), not on
// the input's order.
func spatialOrder(fields []grid.Field, o grid.Options) []placed {
	out := make([]placed, len(fields))
	fr := frameOf(fields)
	for i, f := range fields {
		c := f.Geometry.Bound().Center()
		out[i] = placed{field: f, key: fr.key(c[0], c[1]), weight: estimatedCells(f, o)}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].key != out[j].key {
			return out[i].key < out[j].key
		}
		return out[i].field.ID < out[j].field.ID
	})
	return out
}

// estimatedCells is about the number of cells grid.Build lays in f: its
// area over the cell size its area class takes (the requested one when
// legal), at least 1. Building every grid of a portfolio to count them
// would cost each shard the whole portfolio's gridding.
func estimatedCells(f grid.Field, o grid.Options) float64 {
	area := grid.AreaHa(f.Geometry)
	size, err := grid.CellSize(area, o.CellHa)
	if err != nil || !(size > 0) {
		return 1
	}
	return max(1, area/size)
}

// spatialShards assigns each talhão to one of n shards: the talhões in
// spatial order cut into n runs of about equal estimated cells (a talhão
// belongs to the shard where the middle of its weight falls). Neighbours
// then share a shard, so a shard reads the image tiles of its own area,
// not of the whole portfolio; the assignment depends only on the
// portfolio (its geometries and ids), not on the input order or machine.
func spatialShards(fields []grid.Field, n int, o grid.Options) map[string]int {
	order := spatialOrder(fields, o)
	total := 0.0
	for _, p := range order {
		total += p.weight
	}
	out := make(map[string]int, len(order))
	acc := 0.0
	for _, p := range order {
		out[p.field.ID] = min(n-1, int((acc+p.weight/2)/total*float64(n)))
		acc += p.weight
	}
	return out
}

// spatialGroups cuts the talhões, in spatial order, into groups of at most
// maxCells estimated cells (a talhão larger than that is a group alone).
func spatialGroups(fields []grid.Field, maxCells int, o grid.Options) [][]grid.Field {
	var groups [][]grid.Field
	var cur []grid.Field
	acc := 0.0
	for _, p := range spatialOrder(fields, o) {
		if len(cur) > 0 && acc+p.weight > float64(maxCells) {
			groups = append(groups, cur)
			cur, acc = nil, 0
		}
		cur = append(cur, p.field)
		acc += p.weight
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups
}
