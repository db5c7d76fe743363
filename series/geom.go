package series

import (
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"
)

// geomIntersects reports whether two lon/lat (multi)polygons share any
// point: a vertex of one inside the other, or crossing edges.
func geomIntersects(a orb.Geometry, b orb.MultiPolygon) bool {
	var am orb.MultiPolygon
	switch g := a.(type) {
	case orb.Polygon:
		am = orb.MultiPolygon{g}
	case orb.MultiPolygon:
		am = g
	default:
		return true
	}
	if !am.Bound().Intersects(b.Bound()) {
		return false
	}
	for _, p := range am {
		for _, r := range p {
			for _, v := range r {
				if planar.MultiPolygonContains(b, v) {
					return true
				}
			}
		}
	}
	for _, p := range b {
		for _, r := range p {
			for _, v := range r {
				if planar.MultiPolygonContains(am, v) {
					return true
				}
			}
		}
	}
	for _, pa := range am {
		for _, ra := range pa {
			for _, pb := range b {
				for _, rb := range pb {
					if ringsCross(ra, rb) {
						return true
					}
				}
			}
		}
	}
	return false
}

func ringsCross(a, b orb.Ring) bool {
	for i := 0; i+1 < len(a); i++ {
		for j := 0; j+1 < len(b); j++ {
			if segmentsCross(a[i], a[i+1], b[j], b[j+1]) {
				return true
			}
		}
	}
	return false
}

func segmentsCross(p1, p2, q1, q2 orb.Point) bool {
	d1 := cross(q1, q2, p1)
	d2 := cross(q1, q2, p2)
	d3 := cross(p1, p2, q1)
	d4 := cross(p1, p2, q2)
	return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
}

func cross(a, b, c orb.Point) float64 {
	return (b[0]-a[0])*(c[1]-a[1]) - (b[1]-a[1])*(c[0]-a[0])
}
