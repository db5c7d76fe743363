package grid

import (
	"math"
	"testing"

	"github.com/paulmach/orb"
)

// metresPerDeg returns approximate metres per degree of longitude and
// latitude at lat (enough to build test shapes of a given size; areas are
// then measured, not assumed).
func metresPerDeg(lat float64) (mx, my float64) {
	phi := lat * math.Pi / 180
	my = 111132.954 - 559.822*math.Cos(2*phi) + 1.175*math.Cos(4*phi)
	mx = math.Pi / 180 * 6378137 * math.Cos(phi) / math.Sqrt(1-0.00669437999014*math.Sin(phi)*math.Sin(phi))
	return mx, my
}

// rectRing is a closed counter-clockwise lon/lat ring of a w×h metre
// rectangle whose south-west corner is (lon, lat).
func rectRing(lon, lat, w, h float64) orb.Ring {
	mx, my := metresPerDeg(lat)
	dx, dy := w/mx, h/my
	return orb.Ring{{lon, lat}, {lon + dx, lat}, {lon + dx, lat + dy}, {lon, lat + dy}, {lon, lat}}
}

// square returns a square talhão of about ha hectares with its south-west
// corner at (lon, lat).
func square(lon, lat, ha float64) orb.MultiPolygon {
	s := math.Sqrt(ha * 1e4)
	return orb.MultiPolygon{{rectRing(lon, lat, s, s)}}
}

// lShape returns an L-shaped talhão of about ha hectares: a square of side
// 2s with its north-east quarter removed (3 s² = ha).
func lShape(lon, lat, ha float64) orb.MultiPolygon {
	s := math.Sqrt(ha * 1e4 / 3)
	mx, my := metresPerDeg(lat)
	dx, dy := s/mx, s/my
	r := orb.Ring{
		{lon, lat}, {lon + 2*dx, lat}, {lon + 2*dx, lat + dy}, {lon + dx, lat + dy},
		{lon + dx, lat + 2*dy}, {lon, lat + 2*dy}, {lon, lat},
	}
	return orb.MultiPolygon{{r}}
}

// mustBuild builds a grid or fails the test.
func mustBuild(tb testing.TB, f Field, o Options) Grid {
	tb.Helper()
	g, err := Build(f, o)
	if err != nil {
		tb.Fatalf("Build(%s): %v", f.ID, err)
	}
	return g
}
