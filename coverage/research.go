//go:build research

package coverage

import (
	"math"
	"sort"
	"time"

	"github.com/manejo/manejo/spectral"
)

// Research builds (go test -tags research: the accuracy harnesses and
// diagnostics, docs/coverage.md) turn the knobs below into variables that
// the harness's flags set. The product is built without the tag
// (noresearch.go): constants in their place, no package-level state that
// a test could change.

// plainUnmix unmixes with spectral.New, the estimator before the dry
// line, for before/after figures (-plainunmix).
var plainUnmix bool

// intervalScale is defaultIntervalScale unless -intervalscale sets it.
var intervalScale = defaultIntervalScale

// declaredIntervalScale is defaultDeclaredIntervalScale unless
// -declaredintervalscale sets it.
var declaredIntervalScale = defaultDeclaredIntervalScale

// envelopeFromEnd: declared seasons take their envelope from the
// residue's end on, aged to the window (agedEnvelope; -envfromend).
var envelopeFromEnd = false

// envelopeMaxAgeDays bounds how far before the sowing agedEnvelope
// looks (-envmaxage).
var envelopeMaxAgeDays = 180

// declaredMedian: declared seasons are read with the posterior-median
// straw NDTI, not the mean (-declaredmedian).
var declaredMedian = false

// residueSDScale scales the declared residue prior's standard deviation
// (-residuesdscale; 1 in the product).
var residueSDScale = 1.0

// oraclePrior, when set (TestResidueOracle), replaces the declared prior
// of the season sown on a day by one the harness knows the truth of, to
// measure how far any prior on the straw spectrum could go.
var oraclePrior func(sowing time.Time) (residuePrior, bool)

func oracleSet() bool { return oraclePrior != nil }

// oracleSoil, when set (TestSoilOracle), replaces the soil endmember
// that calibrate settled on for a talhão (fitted: the talhão's own fit;
// otherwise the reference soil) by what it returns, to measure how far a
// soil estimate could take the calibrated reading.
var oracleSoil func(soil spectral.Endmember, fitted bool) spectral.Endmember

// withOracleSoil is soil, or oracleSoil's replacement when it is set.
func withOracleSoil(soil spectral.Endmember, fitted bool) spectral.Endmember {
	if oracleSoil == nil {
		return soil
	}
	return oracleSoil(soil, fitted)
}

// oracleStraw, when set (TestSoilOracle), replaces the straw endmember a
// calibrated season sown on sowing is read with (its intervals keep the
// belief's spectra): the straw's true brightness as well as its NDTI.
var oracleStraw func(straw spectral.Endmember, sowing time.Time) spectral.Endmember

// withOracleStraw is straw, or oracleStraw's replacement when it is set.
func withOracleStraw(straw spectral.Endmember, sowing time.Time) spectral.Endmember {
	if oracleStraw == nil {
		return straw
	}
	return oracleStraw(straw, sowing)
}

// withAgedEnvelope is the declared season's envelope (env, ok), or with
// -envfromend agedEnvelope's when it has one (tried in issue 30's fourth
// session, not kept: docs/coverage.md).
func withAgedEnvelope(c *calibration, to time.Time, env float64, ok bool) (float64, bool) {
	if a, aok := agedEnvelope(c, to); aok && envelopeFromEnd {
		return a, true
	}
	return env, ok
}

// withDeclaredPoint is the posterior-mean straw NDTI mean a declared
// season is read with, or with -declaredmedian the posterior median.
func withDeclaredPoint(f spectral.StrawFit, mean float64) float64 {
	if declaredMedian {
		return weightedMedianNDTI(f)
	}
	return mean
}

// agedEnvelope is the dry-residue envelope of a declared residue whose
// crop ended on a declared day: the second-highest talhão-median NDTI of
// the dry dates from that end to the sowing to, each lowered by the NDTI
// the law says the residue loses between its date and the day the prior
// is read (decayDrop times the mass decomposed in between). False
// without a declared end or with fewer than minEnvelopeDates such dates.
func agedEnvelope(c *calibration, to time.Time) (float64, bool) {
	r := c.residue
	if r.end.IsZero() {
		return math.NaN(), false
	}
	from := r.end
	if lim := to.AddDate(0, 0, -envelopeMaxAgeDays); from.Before(lim) {
		from = lim
	}
	var v []float64
	for i, d := range c.dates {
		if d.Before(from) || !d.Before(to) || c.ndvi[i] >= envelopeMaxNDVI {
			continue
		}
		loss := massLeft(r.halfLife, r.end, d) - massLeft(r.halfLife, r.end, r.read)
		v = append(v, c.ndti[i]-decayDrop*loss)
	}
	if len(v) < minEnvelopeDates {
		return math.NaN(), false
	}
	sort.Float64s(v)
	return v[len(v)-2], true
}

// weightedMedianNDTI is the weighted median of the straw NDTIs of f.
func weightedMedianNDTI(f spectral.StrawFit) float64 {
	type pt struct{ v, w float64 }
	pts := make([]pt, len(f.Weights))
	for i, w := range f.Weights {
		pts[i] = pt{f.Spectra[i].Endmember().NDTI, w}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].v < pts[j].v })
	acc := 0.0
	for _, p := range pts {
		if acc += p.w; acc >= 0.5 {
			return p.v
		}
	}
	return pts[len(pts)-1].v
}
