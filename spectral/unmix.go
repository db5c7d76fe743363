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
//
// An Unmixer from NewDry reads straw and soil on one dry line instead (see
// NewDry).
type Unmixer struct {
	em  [3]Endmember // green, straw, soil (for NewDry, on the dry line)
	dry bool         // NewDry: no green below the dry line, NDTI alone there
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

// NewDry returns the unmixer that reads straw and soil at one NDVI, the
// dry line D, so that only NDVI above every non-green surface reads as
// green canopy. With New, straw and soil differ little in NDVI (0.200 and
// 0.152 for the reference set) and much in NDTI, so the straw–soil line is
// steep in (NDVI, NDTI) and any NDVI variation among dry surfaces (dry
// residues span NDVI ≈ 0.12–0.35 by crop and age, soils ≈ 0.05–0.25;
// Daughtry et al. 2005, 2006; van Deventer et al. 1997) is read as green
// canopy or its negative: at fixed NDTI (0.08–0.22) the straw fraction
// moves by ≈ −1.1 to −1.7 per unit NDVI.
//
// NewDry solves the same system with straw and soil moved to (D, NDTIₛ)
// and (D, NDTI_b), keeping their NDTI and brightness: the green fraction
// then depends on NDVI alone and is 0 at NDVI = D. A reading below D
// (green < 0) is read as a straw/soil mixture from its NDTI alone,
// brightness-weighted,
//
//	straw = SWIR_b·(N − NDTI_b) / (SWIRₛ·(NDTIₛ − N) + SWIR_b·(N − NDTI_b)),
//
// green 0 and soil 1 − straw: the system's NDTI equation at green 0, so the
// fractions are continuous across D, and exact for any straw/soil mixture
// below D whatever the two surfaces' NDVIs. D is the larger of straw's and soil's
// NDVI each raised by one reading's NDVI noise, σ·√(2(1+NDVI²))/VNIR for
// reflectance noise σ = 0.006 per band (0.022 for the reference straw: D =
// 0.222): on D itself, noise on a full-straw reading would otherwise read
// as green half the time and lower the straw, never raise it. The price:
// green over a dry surface darker in NDVI than D is read as less green
// than it is. Its green fraction is never negative, so it cannot flag haze
// by a negative green (an Unmixer from New can). False as for New, and
// when the green endmember lies on the dry line or straw and soil share
// their NDTI.
func NewDry(green, straw, soil Endmember) (Unmixer, bool) {
	return NewDryAt(green, straw, soil, 0)
}

// NewDryAt is NewDry with the dry line at least at NDVI d: for readings
// that say nothing of their own dry surfaces (one or a few readings of a
// field), a caller may raise it to the top of the dry surfaces' NDVI
// range, so that no dry residue is read as part green.
func NewDryAt(green, straw, soil Endmember, d float64) (Unmixer, bool) {
	u, ok := New(green, straw, soil)
	d = max(d, straw.NDVI+ndviNoise(straw), soil.NDVI+ndviNoise(soil))
	u.em[1].NDVI, u.em[2].NDVI, u.dry = d, d, true
	area := (d - green.NDVI) * (soil.NDTI - straw.NDTI)
	return u, ok && math.Abs(area) > 1e-4
}

// DryNDVI returns the dry line D of an Unmixer from NewDry, NaN for one
// from New.
func (u Unmixer) DryNDVI() float64 {
	if !u.dry {
		return math.NaN()
	}
	return u.em[1].NDVI
}

// readingNoise is the reflectance noise per band (sd) assumed of one
// reading, as in FieldSoilMaxMisfit.
const readingNoise = 0.006

// ndviNoise is the NDVI sd that readingNoise in red and NIR gives a surface
// of e's NDVI and VNIR brightness: with red = VNIR(1−V)/2 and NIR =
// VNIR(1+V)/2, ∂V/∂NIR = 2·red/VNIR² and ∂V/∂red = −2·NIR/VNIR².
func ndviNoise(e Endmember) float64 {
	return readingNoise * math.Sqrt(2*(1+e.NDVI*e.NDVI)) / e.VNIR
}

// Fractions returns the green, straw and soil fractions of a reading. They
// add up to 1 but are not clamped: a reading outside the endmember triangle
// gives fractions outside 0..1 (callers use that to spot haze or water).
// They are NaN when the system is singular for this reading. An Unmixer
// from NewDry reads a reading below its dry line from NDTI alone (NewDry).
func (u Unmixer) Fractions(ndvi, ndti float64) (green, straw, soil float64) {
	g, s, b := u.solve(ndvi, ndti)
	if u.dry && g < 0 {
		st, so := u.em[1], u.em[2]
		s = so.SWIR * (ndti - so.NDTI) / (st.SWIR*(st.NDTI-ndti) + so.SWIR*(ndti-so.NDTI))
		g, b = 0, 1-s
	}
	return g, s, b
}

// solve is the three-member system of Unmixer.
func (u Unmixer) solve(ndvi, ndti float64) (green, straw, soil float64) {
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
