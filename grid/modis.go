package grid

import (
	"math"

	"github.com/paulmach/orb"
)

// MODIS sinusoidal grid (MOD13Q1 250 m): a sphere of radius modisR metres,
// pixels of modisPixelM metres, the grid's upper-left corner at
// (modisX0, modisY0).
const (
	modisR      = 6371007.181
	modisPixelM = 231.656358263958
	modisX0     = -20015109.354
	modisY0     = 10007554.677
	// modisHaPerPoint is IN 6.4 I's density: at least one point per 10 ha.
	modisHaPerPoint = 10.0
)

// modisPixel returns the corners, in lon/lat, of the boundary of the MODIS
// 250 m pixel holding p, densified to 4 segments per side (its east and
// west sides are curves in lon/lat). The ring is closed.
func modisPixel(p orb.Point) orb.Ring {
	x0, y0, x1, y1 := modisPixelBounds(p)
	const k = 4
	ring := make(orb.Ring, 0, 4*k+1)
	add := func(x, y float64) {
		lat := y / modisR
		ring = append(ring, orb.Point{x / (modisR * math.Cos(lat)) / degRad, lat / degRad})
	}
	for i := 0; i < k; i++ { // south side, west → east
		add(x0+(x1-x0)*float64(i)/k, y0)
	}
	for i := 0; i < k; i++ { // east side, south → north
		add(x1, y0+(y1-y0)*float64(i)/k)
	}
	for i := 0; i < k; i++ { // north side, east → west
		add(x1-(x1-x0)*float64(i)/k, y1)
	}
	for i := 0; i < k; i++ { // west side, north → south
		add(x0, y1-(y1-y0)*float64(i)/k)
	}
	return append(ring, ring[0])
}

// modisPixelBounds returns the sinusoidal bounds (metres) of the MODIS
// 250 m pixel holding the lon/lat point p.
func modisPixelBounds(p orb.Point) (x0, y0, x1, y1 float64) {
	phi := p[1] * degRad
	x := modisR * p[0] * degRad * math.Cos(phi)
	y := modisR * phi
	col := math.Floor((x - modisX0) / modisPixelM)
	row := math.Floor((modisY0 - y) / modisPixelM)
	x0 = modisX0 + col*modisPixelM
	y1 = modisY0 - row*modisPixelM
	return x0, y1 - modisPixelM, x0 + modisPixelM, y1
}

// ringInside reports whether the closed ring r (same plane as mp) lies
// wholly inside mp: every vertex inside, no edge of mp crossing or touching
// r, and no vertex of mp (a hole, a notch) inside r.
func ringInside(mp orb.MultiPolygon, r orb.Ring) bool {
	for _, q := range r[:len(r)-1] {
		if !inside(mp, q) {
			return false
		}
	}
	rb := r.Bound()
	for _, poly := range mp {
		for _, pr := range poly {
			if !pr.Bound().Intersects(rb) {
				continue
			}
			for i := 1; i < len(pr); i++ {
				a, b := pr[i-1], pr[i]
				eb := orb.Bound{Min: orb.Point{math.Min(a[0], b[0]), math.Min(a[1], b[1])}, Max: orb.Point{math.Max(a[0], b[0]), math.Max(a[1], b[1])}}
				if !eb.Intersects(rb) {
					continue
				}
				if ringCrossParity(r, a) {
					return false
				}
				for j := 1; j < len(r); j++ {
					if _, hit := segCross(a, b, r[j-1], r[j]); hit {
						return false
					}
				}
			}
		}
	}
	return true
}
