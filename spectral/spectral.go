package spectral

import (
	"math"
	"sort"
)

// Spectrum is a surface reflectance in the four bands NDVI and NDTI are
// made of (Sentinel-2 B4, B8, B11, B12; Landsat 4, 5, 6, 7), 0..1.
type Spectrum struct{ Red, NIR, SWIR1, SWIR2 float64 }

// Valid reports whether all four bands are finite and positive (a band not
// read is NaN or 0).
func (s Spectrum) Valid() bool {
	for _, v := range s.bands() {
		if !(v > 0) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// Endmember returns s in the terms of the index-space Unmixer.
func (s Spectrum) Endmember() Endmember {
	return Endmember{
		NDVI: (s.NIR - s.Red) / (s.NIR + s.Red),
		NDTI: (s.SWIR1 - s.SWIR2) / (s.SWIR1 + s.SWIR2),
		VNIR: s.Red + s.NIR,
		SWIR: s.SWIR1 + s.SWIR2,
	}
}

func (s Spectrum) bands() [4]float64 { return [4]float64{s.Red, s.NIR, s.SWIR1, s.SWIR2} }

// Coefficients fits r as a non-negative-free linear combination a·green +
// b·straw + c·soil by least squares over the four bands, without the
// sum-to-one constraint: a reading darkened or brightened as a whole
// (illumination, a soil brighter than soil) scales all three coefficients
// alike. resid is the root-mean-square misfit over the four bands (the one
// degree of freedom left). NaNs when r is invalid or the endmembers are
// linearly dependent.
func Coefficients(green, straw, soil, r Spectrum) (a, b, c, resid float64) {
	nan := math.NaN()
	if !r.Valid() {
		return nan, nan, nan, nan
	}
	e := [3][4]float64{green.bands(), straw.bands(), soil.bands()}
	y := r.bands()
	var m [3][3]float64
	var v [3]float64
	for i := range 3 {
		for j := range 3 {
			for k := range 4 {
				m[i][j] += e[i][k] * e[j][k]
			}
		}
		for k := range 4 {
			v[i] += e[i][k] * y[k]
		}
	}
	d := det3(m)
	if math.Abs(d) < 1e-14 {
		return nan, nan, nan, nan
	}
	var f [3]float64
	for i := range f {
		mi := m
		for j := range 3 {
			mi[j][i] = v[j]
		}
		f[i] = det3(mi) / d
	}
	ss := 0.0
	for k := range 4 {
		p := f[0]*e[0][k] + f[1]*e[1][k] + f[2]*e[2][k]
		ss += (y[k] - p) * (y[k] - p)
	}
	return f[0], f[1], f[2], math.Sqrt(ss / 4)
}

// SoilFit is the result of FitSoil.
type SoilFit struct {
	Soil       Spectrum // the fitted soil spectrum
	Brightness float64  // its brightness relative to the template (all bands)
	SWIR1      float64  // its SWIR1 relative to the template's, after Brightness
	N          int      // readings the fit used (after trimming)
	// Misfit is the median of Coefficients' misfit over the readings kept,
	// with the fitted soil: near the readings' noise when they are
	// mixtures of the three spectra, larger when the green or straw of
	// the field is not the template's (or the soil not of its family).
	Misfit float64
}

// Soil-fit search grid and trimming.
const (
	fitSWIRLo, fitSWIRHi, fitSWIRStep = 0.94, 1.06, 0.0025
	fitMinSoil                        = 0.3 // minimum soil coefficient of a reading used to scale the soil
	fitOutlier                        = 4   // misfit, in medians, beyond which a reading is an outlier
)

// FitSoil estimates the soil of one field from many of its readings rs
// (every clear reading of every cell and date: the soil is a property of
// the field, the fractions of each reading). The soil is the template soil
// scaled in brightness as a whole and in its SWIR1 band against the others
// — the two ways soils of one class differ most (moisture, organic matter
// and iron darken all bands; clay minerals and carbonates change the
// SWIR1/SWIR2 ratio, hence the soil's NDTI). Green and straw spectra are
// taken as known.
//
// The SWIR1 factor is the one that best explains the readings as mixtures
// of the three spectra (least squares of Coefficients' misfit, the single
// degree of freedom per reading that the fractions leave, on a grid
// 0.94–1.06 by 0.0025), searched twice: the second time without the
// readings whose misfit exceeds 4 times the median (thin cloud and shadow
// the mask missed). The brightness is not visible in that misfit (a
// brighter soil in a smaller share gives the same spectrum), so it is fixed
// by asking the readings' fractions to sum to one on average: with
// Coefficients' a, b, c, 1/brightness = Σ c(1 − a − b) / Σ c², over
// readings with a soil coefficient of at least 0.3. false when fewer than
// minN readings are usable.
func FitSoil(green, straw, soil Spectrum, rs []Spectrum, minN int) (SoilFit, bool) {
	var ok []Spectrum
	for _, r := range rs {
		if r.Valid() {
			ok = append(ok, r)
		}
	}
	if len(ok) < minN || len(ok) == 0 {
		return SoilFit{}, false
	}
	// The SWIR1 factor with the least squared misfit; then again without
	// the outliers of that fit (misfit above 4 times the median, ≈ 2.7 σ:
	// thin cloud and shadow the mask missed). Trimming a fixed share
	// instead biases the factor (by ≈ −0.01 with 0.006 noise).
	bestF := searchSWIR1(green, straw, soil, ok)
	s := soil
	s.SWIR1 *= bestF
	res := make([]float64, len(ok))
	for i, r := range ok {
		_, _, _, res[i] = Coefficients(green, straw, s, r)
	}
	sorted := append([]float64(nil), res...)
	sort.Float64s(sorted)
	lim := fitOutlier * sorted[len(sorted)/2]
	kept := ok[:0:0]
	for i, r := range ok {
		if res[i] <= lim {
			kept = append(kept, r)
		}
	}
	if len(kept) < minN {
		return SoilFit{}, false
	}
	ok = kept
	bestF = searchSWIR1(green, straw, soil, ok)
	s = soil
	s.SWIR1 *= bestF
	type co struct{ a, b, c float64 }
	var cs []co
	res = res[:0]
	for _, r := range ok {
		a, b, c, e := Coefficients(green, straw, s, r)
		res = append(res, e)
		if c >= fitMinSoil && !math.IsNaN(e) {
			cs = append(cs, co{a, b, c})
		}
	}
	sort.Float64s(res)
	misfit := res[len(res)/2]
	if len(cs) < minN || len(cs) == 0 {
		return SoilFit{}, false
	}
	var num, den float64
	for _, x := range cs {
		num += x.c * (1 - x.a - x.b)
		den += x.c * x.c
	}
	if !(num > 0) {
		return SoilFit{}, false
	}
	k := den / num
	s = Spectrum{s.Red * k, s.NIR * k, s.SWIR1 * k, s.SWIR2 * k}
	return SoilFit{Soil: s, Brightness: k, SWIR1: bestF, N: len(cs), Misfit: misfit}, true
}

// searchSWIR1 returns the SWIR1 factor of soil, on the fit grid, with the
// least sum of squared misfits of rs.
func searchSWIR1(green, straw, soil Spectrum, rs []Spectrum) float64 {
	bestF, bestCost := 1.0, math.Inf(1)
	for f := fitSWIRLo; f <= fitSWIRHi+1e-9; f += fitSWIRStep {
		s := soil
		s.SWIR1 *= f
		n, ok := normal(green, straw, s)
		if !ok {
			continue
		}
		cost := 0.0
		for _, r := range rs {
			e := misfit(n, r)
			cost += e * e
		}
		if cost < bestCost {
			bestF, bestCost = f, cost
		}
	}
	return bestF
}

// normal returns the unit vector of band space orthogonal to the three
// spectra (the generalised cross product), false when they are dependent.
func normal(a, b, c Spectrum) ([4]float64, bool) {
	e := [3][4]float64{a.bands(), b.bands(), c.bands()}
	var n [4]float64
	norm := 0.0
	for k := range 4 {
		var m [3][3]float64
		for i := range 3 {
			col := 0
			for j := range 4 {
				if j == k {
					continue
				}
				m[i][col] = e[i][j]
				col++
			}
		}
		n[k] = det3(m)
		if k%2 == 1 {
			n[k] = -n[k]
		}
		norm += n[k] * n[k]
	}
	if norm < 1e-24 {
		return n, false
	}
	norm = math.Sqrt(norm)
	for k := range n {
		n[k] /= norm
	}
	return n, true
}

// misfit is Coefficients' resid from the unit normal of the endmembers'
// span: the root-mean-square over the four bands of r's component along n.
func misfit(n [4]float64, r Spectrum) float64 {
	b := r.bands()
	return math.Abs(n[0]*b[0]+n[1]*b[1]+n[2]*b[2]+n[3]*b[3]) / 2
}

// StrawFit is a belief about the straw spectrum of one field and season:
// candidate spectra (the reference straw with its SWIR2 scaled, which sets
// its NDTI: residue type and age change the depth of the cellulose and
// lignin absorption near 2.1 µm most, Daughtry 2005) and their
// probabilities.
type StrawFit struct {
	Straw   Spectrum   // the reference straw the candidates scale
	Factors []float64  // SWIR2 factors of the candidates (grid 0.70–1.50 by 0.02)
	Spectra []Spectrum // the candidate spectra
	Weights []float64  // their probabilities, summing to 1
}

// Straw belief grid: the template's SWIR2 scaled 0.70–1.50 (straw NDTI
// ≈ 0.39 down to 0.05 around the reference 0.241).
const strawLo, strawHi, strawStep = 0.70, 1.50, 0.02

// AtLeast returns f updated by the knowledge that the straw's NDTI is at
// least env give or take sd (a Gaussian step: weight × Φ((NDTI − env)/sd)).
// The dry-residue envelope of a field — the highest NDTI its dry, bare
// of green readings reached — is such a bound: mixtures of straw and soil
// lie below the straw's NDTI. f is returned unchanged when the update
// leaves no weight.
func (f StrawFit) AtLeast(env, sd float64) StrawFit {
	out := f
	out.Weights = make([]float64, len(f.Weights))
	sum := 0.0
	for i, w := range f.Weights {
		z := (f.Spectra[i].Endmember().NDTI - env) / sd
		out.Weights[i] = w * 0.5 * math.Erfc(-z/math.Sqrt2)
		sum += out.Weights[i]
	}
	if !(sum > 1e-12) {
		return f
	}
	for i := range out.Weights {
		out.Weights[i] /= sum
	}
	return out
}

// Mean returns the posterior-mean straw spectrum of f (band by band).
func (f StrawFit) Mean() Spectrum {
	var m Spectrum
	for i, w := range f.Weights {
		s := f.Spectra[i]
		m = Spectrum{m.Red + w*s.Red, m.NIR + w*s.NIR, m.SWIR1 + w*s.SWIR1, m.SWIR2 + w*s.SWIR2}
	}
	return m
}

// PriorStraw is the straw belief without readings: the reference straw's
// SWIR2 scaled on the belief grid (0.70–1.50) with Gaussian weights in NDTI around
// the reference (0.241) with standard deviation sd (crop residues of
// Brazilian grain fields, fresh to aged and dry to damp, span ≈ 0.15–0.32:
// Daughtry et al. 2005; Quemada & Daughtry 2016; sd 0.045 covers that
// range at ±1.9 sd).
func PriorStraw(sd float64) StrawFit {
	return PriorStrawAt(StrawSpectrum.Endmember().NDTI, sd)
}

// PriorStrawAt is PriorStraw centred on the straw NDTI ref instead of the
// reference straw's: the same candidates (the reference straw's SWIR2
// scaled on the belief grid), with Gaussian weights in NDTI around ref
// with standard deviation sd. A belief from outside the readings — the
// declared residue's type and age (coverage) — sets ref and sd.
func PriorStrawAt(ref, sd float64) StrawFit {
	var f StrawFit
	sum := 0.0
	for x := strawLo; x <= strawHi+1e-9; x += strawStep {
		s := StrawSpectrum
		s.SWIR2 *= x
		z := (s.Endmember().NDTI - ref) / sd
		w := math.Exp(-z * z / 2)
		f.Factors, f.Spectra, f.Weights = append(f.Factors, x), append(f.Spectra, s), append(f.Weights, w)
		sum += w
	}
	for i := range f.Weights {
		f.Weights[i] /= sum
	}
	f.Straw = StrawSpectrum
	return f
}

// AtEdge reports whether the fitted SWIR1 factor lies on the edge of the
// search grid (0.94 or 1.06): the readings are not mixtures of the template
// family (another soil class, wet dates), and the fit is not to be trusted.
func (f SoilFit) AtEdge() bool {
	return f.SWIR1 <= fitSWIRLo+fitSWIRStep/2 || f.SWIR1 >= fitSWIRHi-fitSWIRStep/2
}

// MinFieldSoilObs is the number of valid readings FieldSoil needs.
const MinFieldSoilObs = 30

// FieldSoilMaxMisfit is the largest SoilFit.Misfit FieldSoil keeps:
// 1.25 × the median misfit that reflectance noise of 0.006 per band alone
// gives (0.6745 · 0.006 / 2). Above it the readings are not mixtures of the
// reference green and straw and a soil of the template's family, so the
// SWIR1 factor that least misfits them is not the soil's: in the harder
// harness (issue 17) the fits it accepted before moved dark clayey soils'
// NDTI up, away from their truth.
const FieldSoilMaxMisfit = 0.0025

// FieldSoil is the one talhão soil calibration of manejo, which tillage
// and coverage both read their readings with: FitSoil of the reference
// green, straw and soil on rs (a talhão's readings with little green
// canopy), kept only when it uses at least MinFieldSoilObs readings and
// its SWIR1 factor is not on the edge of its grid (AtEdge) and its Misfit
// is at most FieldSoilMaxMisfit (the readings are mixtures of the template
// family to within reading noise). Otherwise the readings are not such
// mixtures — another soil class, another straw, wet dates — and the
// reference soil is the safer reading.
func FieldSoil(rs []Spectrum) (SoilFit, bool) {
	f, ok := FitSoil(GreenSpectrum, StrawSpectrum, SoilSpectrum, rs, MinFieldSoilObs)
	if !ok || f.AtEdge() || f.Misfit > FieldSoilMaxMisfit {
		return SoilFit{}, false
	}
	return f, true
}
