package spectral

import "math"

// Endmember is a pure surface in the terms unmixing needs: its two indices
// and its brightness in the bands each index is made of. A mixture's NDVI is
// the brightness-weighted mean of its members' NDVIs (weights f·VNIR), and
// likewise its NDTI with f·SWIR, so brightness matters: green canopy is dark
// in SWIR and weighs little in a mixture's NDTI.
type Endmember struct {
	NDVI, NDTI float64 // unitless
	VNIR       float64 // red + NIR surface reflectance (0..2)
	SWIR       float64 // SWIR1 + SWIR2 surface reflectance (0..2)
}

// Unmixer solves, for one reading (V, N), the linear system
//
//	Σ fᵢ·VNIRᵢ·(NDVIᵢ − V) = 0
//	Σ fᵢ·SWIRᵢ·(NDTIᵢ − N) = 0
//	Σ fᵢ = 1
//
// for the fractions f of green canopy, straw and soil: linear mixing of
// reflectances rewritten in index space (each index is a ratio of band sums,
// so V·Σfᵢ(NIRᵢ+Redᵢ) = Σfᵢ(NIRᵢ−Redᵢ) is linear in f).
type Unmixer struct {
	em [3]Endmember // green, straw, soil
}

// New returns the unmixer of three endmembers, and false when they cannot
// be unmixed: a non-positive brightness, a NaN index, or endmembers
// collinear in (NDVI, NDTI), which leave the system singular.
func New(green, straw, soil Endmember) (Unmixer, bool) {
	u := Unmixer{em: [3]Endmember{green, straw, soil}}
	for _, e := range u.em {
		if !(e.VNIR > 0 && e.SWIR > 0) || math.IsNaN(e.NDVI) || math.IsNaN(e.NDTI) || math.IsInf(e.NDVI, 0) || math.IsInf(e.NDTI, 0) {
			return u, false
		}
	}
	g, s, b := green, straw, soil
	area := (s.NDVI-g.NDVI)*(b.NDTI-g.NDTI) - (b.NDVI-g.NDVI)*(s.NDTI-g.NDTI)
	return u, math.Abs(area) > 1e-4
}

// Fractions returns the green, straw and soil fractions of a reading. They
// add up to 1 but are not clamped: a reading outside the endmember triangle
// gives fractions outside 0..1 (callers use that to spot haze or water).
// They are NaN when the system is singular for this reading.
func (u Unmixer) Fractions(ndvi, ndti float64) (green, straw, soil float64) {
	var m [3][3]float64
	for i, e := range u.em {
		m[0][i] = e.VNIR * (e.NDVI - ndvi)
		m[1][i] = e.SWIR * (e.NDTI - ndti)
		m[2][i] = 1
	}
	d := det3(m)
	if math.Abs(d) < 1e-12 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var f [3]float64
	for i := range f {
		mi := m
		mi[0][i], mi[1][i], mi[2][i] = 0, 0, 1
		f[i] = det3(mi) / d
	}
	return f[0], f[1], f[2]
}

func det3(m [3][3]float64) float64 {
	return m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) -
		m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) +
		m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
}
