package slope

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors of the slope package; test them with errors.Is.
var (
	// ErrAllVoid reports a talhão with no valid slope pixel inside it.
	ErrAllVoid = errors.New("slope: all DEM pixels inside the talhão are void")
	// ErrTooCoarse reports a DEM coarser than the 30 m class of IN 6.3.
	ErrTooCoarse = errors.New("slope: DEM coarser than 30 m (IN 6.3)")
	// ErrBadInput reports malformed arguments to the pure functions.
	ErrBadInput = errors.New("slope: bad input")
)

// Ellipsoid is a reference ellipsoid: semi-major axis A in metres and inverse
// flattening InvF (0 for a sphere).
type Ellipsoid struct {
	A    float64 // semi-major axis, metres
	InvF float64 // inverse flattening; 0 means a sphere
}

// WGS84 is the ellipsoid of EPSG:4326 (NASADEM, SRTM, Copernicus DEM).
var WGS84 = Ellipsoid{A: 6378137, InvF: 298.257223563}

// e2 returns the first eccentricity squared.
func (e Ellipsoid) e2() float64 {
	if e.InvF == 0 {
		return 0
	}
	f := 1 / e.InvF
	return f * (2 - f)
}

// Radii returns the meridional radius of curvature M and the prime-vertical
// radius of curvature N (ν), in metres, at geodetic latitude latDeg.
func (e Ellipsoid) Radii(latDeg float64) (m, n float64) {
	e2 := e.e2()
	s := math.Sin(latDeg * math.Pi / 180)
	w2 := 1 - e2*s*s
	w := math.Sqrt(w2)
	n = e.A / w
	m = e.A * (1 - e2) / (w2 * w)
	return m, n
}

// PixelSizeM returns the ground size in metres of a geographic pixel of
// dLonDeg × dLatDeg degrees centred at latitude latDeg on ellipsoid e:
// dxM = ν·cos φ·Δλ east–west and dyM = M·Δφ north–south (both positive).
// For a 1 arc-second pixel on WGS84 at the equator that is 30.92 × 30.72 m.
func PixelSizeM(latDeg, dLonDeg, dLatDeg float64, e Ellipsoid) (dxM, dyM float64) {
	m, n := e.Radii(latDeg)
	rad := math.Pi / 180
	dxM = math.Abs(n * math.Cos(latDeg*rad) * dLonDeg * rad)
	dyM = math.Abs(m * dLatDeg * rad)
	return dxM, dyM
}

// Horn returns the slope in percent (100·|∇z|) of each pixel of a row-major
// DEM of width × height pixels, with Horn's 3×3 weighted differences as
// `gdaldem slope -p` computes them. Elevations and pixel sizes share a unit
// (metres). Void elevations are NaN (see NoDataToNaN).
//
// dxM and dyM are the east–west and north–south pixel sizes, either one value
// for the whole grid (projected DEMs) or one per row (geographic DEMs, where
// they shrink with latitude). With per-row sizes each row of the 3×3 window
// uses its own east–west size, so a plane is exact on a geographic grid.
//
// Border pixels and pixels with a NaN in their 3×3 window are NaN, as
// gdaldem leaves them nodata (without -compute_edges).
func Horn(dem []float32, width, height int, dxM, dyM []float64) ([]float32, error) {
	if width < 0 || height < 0 || len(dem) != width*height {
		return nil, fmt.Errorf("horn: %d values for %d×%d pixels: %w", len(dem), width, height, ErrBadInput)
	}
	dxAt, err := perRow("dxM", dxM, height)
	if err != nil {
		return nil, err
	}
	dyAt, err := perRow("dyM", dyM, height)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(dem))
	nan := float32(math.NaN())
	for i := range out {
		out[i] = nan
	}
	for r := 1; r < height-1; r++ {
		ixN, ixC, ixS := 1/dxAt(r-1), 1/dxAt(r), 1/dxAt(r+1)
		iy := 1 / dyAt(r)
		up, mid, dn := dem[(r-1)*width:r*width], dem[r*width:(r+1)*width], dem[(r+1)*width:(r+2)*width]
		for c := 1; c < width-1; c++ {
			a, b, cc := float64(up[c-1]), float64(up[c]), float64(up[c+1])
			d, f := float64(mid[c-1]), float64(mid[c+1])
			g, h, i := float64(dn[c-1]), float64(dn[c]), float64(dn[c+1])
			// Horn: dz/dx = [(c−a)/dx₋ + 2(f−d)/dx₀ + (i−g)/dx₊] / 8,
			//       dz/dy = [(g+2h+i) − (a+2b+c)] / (8·dy).
			// A NaN anywhere in the window propagates to the result.
			gx := ((cc-a)*ixN + 2*(f-d)*ixC + (i-g)*ixS) / 8
			gy := ((g + 2*h + i) - (a + 2*b + cc)) * iy / 8
			v := 100 * math.Sqrt(gx*gx+gy*gy)
			if math.IsNaN(float64(mid[c])) {
				v = math.NaN()
			}
			out[r*width+c] = float32(v)
		}
	}
	return out, nil
}

// perRow validates a pixel-size slice (one value, or one per row) and
// returns an accessor by row.
func perRow(name string, s []float64, height int) (func(int) float64, error) {
	switch {
	case len(s) == 1:
		v := s[0]
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("horn: %s = %v, want > 0: %w", name, v, ErrBadInput)
		}
		return func(int) float64 { return v }, nil
	case len(s) == height:
		for r, v := range s {
			if !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("horn: %s[%d] = %v, want > 0: %w", name, r, v, ErrBadInput)
			}
		}
		return func(r int) float64 { return s[r] }, nil
	default:
		return nil, fmt.Errorf("horn: %s has %d values, want 1 or %d (one per row): %w", name, len(s), height, ErrBadInput)
	}
}

// NoDataToNaN replaces, in place, every value of dem equal to nodata (and
// every ±Inf) with NaN, the void marker Horn expects.
func NoDataToNaN(dem []float32, nodata float64) {
	nd := float32(nodata)
	nan := float32(math.NaN())
	for i, v := range dem {
		if v == nd || math.IsInf(float64(v), 0) {
			dem[i] = nan
		}
	}
}
