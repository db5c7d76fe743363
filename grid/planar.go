package grid

import (
	"math"
	"sort"

	"github.com/paulmach/orb"
)

// Planar helpers on orb geometries in one plane (UTM metres or, for
// validation, lon/lat degrees). Rings are closed (first == last).

// inside reports whether p is inside mp by the even-odd rule over every ring
// (shells and holes), which is exact for valid polygons.
func inside(mp orb.MultiPolygon, p orb.Point) bool {
	in := false
	for _, poly := range mp {
		for _, r := range poly {
			if ringCrossParity(r, p) {
				in = !in
			}
		}
	}
	return in
}

// ringCrossParity reports whether a ray from p towards +x crosses ring r an
// odd number of times.
func ringCrossParity(r orb.Ring, p orb.Point) bool {
	in := false
	for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
		a, b := r[i], r[j]
		if (a[1] > p[1]) != (b[1] > p[1]) {
			x := a[0] + (p[1]-a[1])*(b[0]-a[0])/(b[1]-a[1])
			if p[0] < x {
				in = !in
			}
		}
	}
	return in
}

// segDist is the distance from p to segment ab.
func segDist(p, a, b orb.Point) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	l2 := dx*dx + dy*dy
	t := 0.0
	if l2 > 0 {
		t = ((p[0]-a[0])*dx + (p[1]-a[1])*dy) / l2
		t = math.Max(0, math.Min(1, t))
	}
	return math.Hypot(p[0]-a[0]-t*dx, p[1]-a[1]-t*dy)
}

// boundaryDist is the distance from p to the nearest edge of mp.
func boundaryDist(mp orb.MultiPolygon, p orb.Point) float64 {
	d := math.Inf(1)
	for _, poly := range mp {
		for _, r := range poly {
			for i := 1; i < len(r); i++ {
				a, b := r[i-1], r[i]
				// cheap rejection on the bounding box of the edge
				if p[0] < math.Min(a[0], b[0])-d || p[0] > math.Max(a[0], b[0])+d ||
					p[1] < math.Min(a[1], b[1])-d || p[1] > math.Max(a[1], b[1])+d {
					continue
				}
				if e := segDist(p, a, b); e < d {
					d = e
				}
			}
		}
	}
	return d
}

// segRect reports whether segment ab touches the closed rectangle b
// (Liang–Barsky clipping).
func segRect(a, b orb.Point, r orb.Bound) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := b[0]-a[0], b[1]-a[1]
	clip := func(p, q float64) bool {
		if p == 0 {
			return q >= 0
		}
		t := q / p
		if p < 0 {
			if t > t1 {
				return false
			}
			if t > t0 {
				t0 = t
			}
		} else {
			if t < t0 {
				return false
			}
			if t < t1 {
				t1 = t
			}
		}
		return true
	}
	return clip(-dx, a[0]-r.Min[0]) && clip(dx, r.Max[0]-a[0]) &&
		clip(-dy, a[1]-r.Min[1]) && clip(dy, r.Max[1]-a[1])
}

// orient is the sign of the cross product (b-a)×(c-a).
func orient(a, b, c orb.Point) float64 {
	return (b[0]-a[0])*(c[1]-a[1]) - (b[1]-a[1])*(c[0]-a[0])
}

// segCross returns whether segments ab and cd intersect and, if so, a point
// they share. Collinear overlaps count.
func segCross(a, b, c, d orb.Point) (orb.Point, bool) {
	d1, d2 := orient(c, d, a), orient(c, d, b)
	d3, d4 := orient(a, b, c), orient(a, b, d)
	if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) {
		t := d1 / (d1 - d2)
		return orb.Point{a[0] + t*(b[0]-a[0]), a[1] + t*(b[1]-a[1])}, true
	}
	on := func(p, q, r orb.Point) bool { // r on segment pq, given collinear
		return math.Min(p[0], q[0]) <= r[0] && r[0] <= math.Max(p[0], q[0]) &&
			math.Min(p[1], q[1]) <= r[1] && r[1] <= math.Max(p[1], q[1])
	}
	switch {
	case d1 == 0 && on(c, d, a):
		return a, true
	case d2 == 0 && on(c, d, b):
		return b, true
	case d3 == 0 && on(a, b, c):
		return c, true
	case d4 == 0 && on(a, b, d):
		return d, true
	}
	return orb.Point{}, false
}

// ringArea is the unsigned planar area of a ring.
func ringArea(r orb.Ring) float64 {
	var s float64
	for i := 1; i < len(r); i++ {
		s += r[i-1][0]*r[i][1] - r[i][0]*r[i-1][1]
	}
	return math.Abs(s) / 2
}

// polyArea is the planar area of a polygon (shell minus holes).
func polyArea(p orb.Polygon) float64 {
	var a float64
	for i, r := range p {
		if i == 0 {
			a += ringArea(r)
		} else {
			a -= ringArea(r)
		}
	}
	return a
}

// rowCrossings appends to xs the x of every crossing of the horizontal line
// y with the edges of mp (half-open rule, so vertices count once) and
// returns them sorted.
func rowCrossings(mp orb.MultiPolygon, y float64, xs []float64) []float64 {
	xs = xs[:0]
	for _, poly := range mp {
		for _, r := range poly {
			for i := 1; i < len(r); i++ {
				a, b := r[i-1], r[i]
				if (a[1] > y) != (b[1] > y) {
					xs = append(xs, a[0]+(y-a[1])*(b[0]-a[0])/(b[1]-a[1]))
				}
			}
		}
	}
	sort.Float64s(xs)
	return xs
}

// interiorPoint returns a point inside polygon p chosen to be far from its
// boundary: the midpoints of the inside intervals of 31 horizontal scan
// lines are candidates, and the one farthest from the boundary wins (the
// idea of GEOS's InteriorPointArea, extended to favour the thickest part).
// ok is false for a degenerate polygon.
func interiorPoint(p orb.Polygon) (orb.Point, bool) {
	mp := orb.MultiPolygon{p}
	b := p.Bound()
	best, bestD := orb.Point{}, -1.0
	var xs []float64
	const lines = 31
	for i := 0; i < lines; i++ {
		y := b.Min[1] + (b.Max[1]-b.Min[1])*(float64(i)+0.5)/lines
		xs = rowCrossings(mp, y, xs)
		for k := 0; k+1 < len(xs); k += 2 {
			if xs[k+1] <= xs[k] {
				continue
			}
			c := orb.Point{(xs[k] + xs[k+1]) / 2, y}
			if d := boundaryDist(mp, c); d > bestD {
				best, bestD = c, d
			}
		}
	}
	return best, bestD > 0
}
