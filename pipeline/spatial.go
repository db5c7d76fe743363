package pipeline

import (
	"math"
	"math/bits"
	"sort"

	"github.com/manejo/manejo/grid"
	"github.com/paulmach/orb"
)

// hilbertOrder is the order of the Hilbert curve that spatial keys use
// within an image tile: 2¹⁶ × 2¹⁶ positions over the square tileQuad.
const hilbertOrder = 16

// The tiling grid spatial keys follow: the grid Sentinel-2 L2A (and HLS)
// archives are cut on. A tile is an MGRS 100 km square of its UTM zone;
// its images start at the square's north-west corner (easting rounded
// down, northing to the nearest 60 m: tile 13TDE is 399960 E, 4500000 N
// on Earth Search) and run 109.8 km east and south, in COG blocks of
// 1,024 px (10.24 km at 10 m, 20.48 km at 20 m). Within a tile the key
// follows a Hilbert curve over the square of tileQuad metres from that
// corner, so every stretch of the curve aligned to a power of four is a
// quadtree square whose edges are block edges: 20.48, 10.24 and 5.12 km
// squares are whole blocks of 1,024- and 512-px COGs at 10 and 20 m.
const (
	tileSquareM = 100_000.0 // side of an MGRS square
	tileQuadM   = 163_840.0 // 8 blocks of 1,024 px at 20 m: holds a 109.8 km tile
	tileSnapM   = 60.0      // tile corners lie on the 60 m grid
	tileImageM  = 109_800.0 // an image runs 10,980 px of 10 m east and south of its corner
)

// tileCorner is the north-west corner of the images of the tile of MGRS
// square column e, row n (eastings and northings over 100 km) of a zone.
func tileCorner(e, n float64) (ulx, uly float64) {
	return math.Floor(e*tileSquareM/tileSnapM) * tileSnapM, math.Round((n+1)*tileSquareM/tileSnapM) * tileSnapM
}

// tileLevels is the number of quadtree levels a key holds: level 0 is the
// tile, level l (1…hilbertOrder) squares of tileQuadM / 2ˡ metres.
const tileLevels = hilbertOrder

// spatialPos is where a talhão lies on the tiling grid: its tile (the
// MGRS square of the centre of its bounding box: the Hilbert key of the
// square's column and row), the smallest quadtree square of that tile
// holding its whole bounding box (level, and the square's first key
// within the tile) and the key of the bounding box's centre.
//
// Talhões sorted by spatialPos follow the quadtree in pre-order: a
// square's talhões that cross a line between its children (and so need
// image blocks on both sides) come first, then each child's, and so on.
// A run of that order that holds a square's crossing talhões and some of
// its children needs the blocks along those lines once, instead of every
// child's shard reaching into its neighbours' blocks.
type spatialPos struct {
	tile, start, centre uint64
	level               int
	// box is the bounding box of the talhão's shells in the UTM zone
	// (EPSG epsg) of its centre: west, south, east, north.
	box  [4]float64
	epsg int
}

func (p spatialPos) less(q spatialPos) bool {
	switch {
	case p.tile != q.tile:
		return p.tile < q.tile
	case p.start != q.start:
		return p.start < q.start
	case p.level != q.level:
		return p.level < q.level
	}
	return p.centre < q.centre
}

// prefix is p's square at level l (its key's first 2l bits), and false
// when p's smallest square is coarser than l (p crosses a level-l line).
func (p spatialPos) prefix(l int) (uint64, bool) {
	if l > p.level {
		return 0, false
	}
	return p.start >> (2 * uint(tileLevels-l)), true
}

// spatialPosOf places a talhão of geometry g on the tiling grid.
func spatialPosOf(g orb.MultiPolygon) spatialPos {
	c := g.Bound().Center()
	epsg, x, y := grid.UTM(c)
	e, n := math.Floor(x/tileSquareM), math.Floor(y/tileSquareM)
	ulx, uly := tileCorner(e, n)
	const side = 1 << hilbertOrder
	cell := func(v float64) uint64 {
		c := math.Floor(v / tileQuadM * side)
		if math.IsNaN(c) || c < 0 {
			return 0
		}
		return uint64(min(c, side-1))
	}
	// The bounding box of its shells' vertices in the tile's zone (a
	// talhão across a zone boundary is projected in the zone of its
	// centre, as grid.Build does).
	x0, y0, x1, y1 := x-ulx, uly-y, x-ulx, uly-y
	for _, p := range g {
		if len(p) == 0 {
			continue
		}
		for _, q := range p[0] {
			qx, qy := grid.UTMInZone(q, epsg)
			x0, x1 = min(x0, qx-ulx), max(x1, qx-ulx)
			y0, y1 = min(y0, uly-qy), max(y1, uly-qy)
		}
	}
	cx0, cx1, cy0, cy1 := cell(x0), cell(x1), cell(y0), cell(y1)
	level := min(tileLevels-bits.Len64(cx0^cx1), tileLevels-bits.Len64(cy0^cy1))
	shift := 2 * uint(tileLevels-level)
	// Tiles on a grid of 10 columns per zone and 100 rows per hemisphere
	// (south first, so rows run north), in Hilbert order too.
	col := uint64((epsg%100-1)*10) + uint64(min(max(e, 0), 9))
	row := uint64(min(max(n, 0), 99))
	if epsg/100 == 326 {
		row += 100
	}
	return spatialPos{
		tile:   hilbertKey(col, row),
		start:  hilbertKey(cx0, cy0) >> shift << shift,
		level:  level,
		centre: hilbertKey(cell(x-ulx), cell(uly-y)),
		box:    [4]float64{ulx + x0, uly - y1, ulx + x1, uly - y0},
		epsg:   epsg,
	}
}

// boundaryLevel is how coarse the boundary between two talhões a before b
// in spatial order is: 0 when they are in different tiles, l when they
// are in one square of level l−1 but not in the same square of level l
// (one of them crossing a level-l line counts as apart), tileLevels+1
// when they share every square (no line of the grid between them). The
// smaller, the fewer image blocks a cut there splits.
func boundaryLevel(a, b spatialPos) int {
	if a.tile != b.tile {
		return 0
	}
	for l := 1; l <= tileLevels; l++ {
		pa, oka := a.prefix(l)
		pb, okb := b.prefix(l)
		if oka != okb || pa != pb {
			return l
		}
		if !oka {
			break
		}
	}
	return tileLevels + 1
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

// placed is a talhão with its place on the tiling grid and its weight: its estimated cells (area over the legal
// cell size of its area class, at least 1).
type placed struct {
	field  grid.Field
	pos    spatialPos
	weight float64
}

// spatialOrder returns the talhões sorted by their spatial key, then id,
// and the running sum of their weights (cum[i]: the weight of the first i).
// The order depends on each talhão alone, not on the input's order or on
// the rest of the portfolio.
func spatialOrder(fields []grid.Field, o grid.Options) (order []placed, cum []float64) {
	order = make([]placed, len(fields))
	for i, f := range fields {
		order[i] = placed{field: f, pos: spatialPosOf(f.Geometry), weight: estimatedCells(f, o)}
	}
	sort.Slice(order, func(i, j int) bool {
		if a, b := order[i].pos, order[j].pos; a.less(b) || b.less(a) {
			return a.less(b)
		}
		return order[i].field.ID < order[j].field.ID
	})
	cum = make([]float64, len(order)+1)
	for i, p := range order {
		cum[i+1] = cum[i] + p.weight
	}
	return order, cum
}

// levelAt is the boundaryLevel of a cut before order[i]; the ends of the
// order are tile edges.
func levelAt(order []placed, i int) int {
	if i <= 0 || i >= len(order) {
		return 0
	}
	return boundaryLevel(order[i-1].pos, order[i].pos)
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

// cutSlack bounds what cuts on coarser lines of the tiling grid may cost
// in balance: a shard holds its mean cells ± 2 × cutSlack of it, and the
// read pass's groups at least 1 − 2 × cutSlack of --read-cells (the last
// excepted).
const cutSlack = 0.125

// spatialShards assigns each talhão to one of n shards: the talhões in
// spatial order cut into n runs of about equal estimated cells (each
// within ±2·cutSlack of the mean), each cut on the coarsest line of the
// tiling grid that balance allows — between image tiles when it can, else between the largest
// quadtree squares of one tile (whole COG blocks) — so that few image
// blocks are read by two shards. With more tiles than shards, shards hold
// whole tiles; a tile is split only when one shard cannot take it whole,
// and then along block lines. The assignment depends only on the
// portfolio (its geometries and ids), not on the input order or machine.
func spatialShards(fields []grid.Field, n int, o grid.Options) map[string]int {
	order, cum := spatialOrder(fields, o)
	cuts := alignedCuts(order, cum, n)
	out := make(map[string]int, len(order))
	s := 0
	for i, p := range order {
		for s < len(cuts) && i >= cuts[s] {
			s++
		}
		out[p.field.ID] = s
	}
	return out
}

// alignedCuts returns n−1 non-decreasing indices into order: shard j+1
// starts at order[cuts[j]]. Cut j is the position of lowest levelAt (then
// nearest the equal split, then first) among those that leave shard j
// within ±2·cutSlack of the mean cells and the shards after it able to
// stay so; cuts may thus drift from the equal split (shards of 2 and 3
// quarters of an image tile rather than 2½ each) as long as every shard
// keeps that balance. When no position qualifies (a talhão larger than the
// bounds), the position nearest the equal split.
func alignedCuts(order []placed, cum []float64, n int) []int {
	return cutsBy(cum, n, func(i int) float64 { return float64(levelAt(order, i)) })
}

// cutsBy returns n−1 non-decreasing indices into the items whose running
// weights are cum, as alignedCuts, taking for each cut the position of
// lowest score (then nearest the equal split, then first).
func cutsBy(cum []float64, n int, score func(i int) float64) []int {
	items := len(cum) - 1
	total := cum[items]
	mean := total / float64(n)
	lo, hi := mean*(1-2*cutSlack), mean*(1+2*cutSlack)
	cuts := make([]int, 0, max(n-1, 0))
	prev := 0
	for j := 1; j < n; j++ {
		ideal := float64(j) * mean
		rest := float64(n - j)
		// float64(…) rounds the product: no fused multiply-add (arm64),
		// so every architecture cuts alike.
		from := max(cum[prev]+lo, total-float64(rest*hi))
		to := min(cum[prev]+hi, total-float64(rest*lo))
		best, bestScore, bestDist := -1, 0.0, 0.0
		for i := max(prev, sort.SearchFloat64s(cum, from)); i <= items && cum[i] <= to; i++ {
			l, d := score(i), math.Abs(cum[i]-ideal)
			if best < 0 || l < bestScore || l == bestScore && d < bestDist {
				best, bestScore, bestDist = i, l, d
			}
		}
		if best < 0 {
			best = max(prev, min(sort.SearchFloat64s(cum, ideal), items))
			if best > prev && ideal-cum[best-1] < cum[best]-ideal {
				best--
			}
		}
		cuts = append(cuts, best)
		prev = best
	}
	return cuts
}

// spatialGroups cuts the talhões, in spatial order, into groups of at most
// maxCells estimated cells (a larger talhão is a group alone), each but the
// last ending on the coarsest line of the tiling grid among the ends that
// leave it at least 1 − 2 × cutSlack of maxCells.
func spatialGroups(fields []grid.Field, maxCells int, o grid.Options) [][]grid.Field {
	order, cum := spatialOrder(fields, o)
	limit := float64(maxCells)
	var groups [][]grid.Field
	for s := 0; s < len(order); {
		e := s + 1
		for e < len(order) && cum[e+1]-cum[s] <= limit {
			e++
		}
		if e < len(order) {
			best, bestLevel := e, levelAt(order, e)
			for i := e - 1; i > s && cum[i]-cum[s] >= (1-2*cutSlack)*limit; i-- {
				if l := levelAt(order, i); l < bestLevel {
					best, bestLevel = i, l
				}
			}
			e = best
		}
		g := make([]grid.Field, 0, e-s)
		for _, p := range order[s:e] {
			g = append(g, p.field)
		}
		groups = append(groups, g)
		s = e
	}
	return groups
}
