//go:build research

package tillage

import (
	"math"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/spectral"
)

// Research builds (go test -tags research: the accuracy harnesses and
// diagnostics, docs/tillage.md) turn plainUnmix, mdOff and stepOff into variables that the
// harness's flags set (research_test.go). The product is built
// without the tag (noresearch.go): a constant, no package-level state that
// a test could change.

// plainUnmix unmixes with spectral.New, the detector before the dry line,
// for before/after figures.
var plainUnmix bool

// mdOff and stepOff turn the median-NDTI drop test and the NDTI step test
// off (-nomediandrop, -nostep): the detector before each.
var mdOff, stepOff bool

// lowResOff turns the low-residue test off (-nolowresidue).
var lowResOff bool

// wetOff stops the low-residue test reading the ground's wetting response
// (-nowetresponse): the level judged against lowResidueCover alone, the
// detector before session 9.
var wetOff bool

// pooledShare is the share of the interior cells that must be clear on a
// date for the pooled series to read it (-pooledshare; 0.5 in the
// product).
var pooledShare = 0.5

// pooledWeight is the guard measured with a lower pooledShare
// (-pooledweight; 0, off, in the product): a date of the step series read
// from a share below half of the interior cells has its noise scaled by
// √(1 + pooledWeight·(0.5/share − 1)), so it enters the step test's σ and
// levels with less weight (at pooledWeight 1 the variance of a median of
// share·n points, half the cells' taken as the unit). Measured with
// pooledShare 0.15 and weight 4, not adopted (docs/tillage.md "The pooled
// series' clear share").
var pooledWeight float64

// stepShare, when > 0, is the clear share at which the step test alone
// reads the pooled series (-stepshare): the other tests, the portfolio
// and the low-residue level keep pooledShare's dates. It added false
// positives on the US and portfolio worlds (docs/tillage.md).
var stepShare float64

// stepPooled is the pooled series the step test reads: pl, or with
// stepShare > 0 the interior's dates at that share.
func stepPooled(interior [][]Obs, pl []pooledObs) []pooledObs {
	if stepShare > 0 {
		return pooledAt(interior, stepShare)
	}
	return pl
}

// dateScale is the noise scale of a date of the step series read from
// share of the interior cells (pooledWeight).
func dateScale(share float64) float64 {
	if !(pooledWeight > 0) || !(share > 0) || share >= 0.5 {
		return 1
	}
	return math.Sqrt(1 + pooledWeight*(0.5/share-1))
}

// soilKnobs are tuning's research-only knobs of the soil the step test's
// relative gate measures to (stepSoil); the product's twin is empty.
type soilKnobs struct {
	// pfSoilQ and pfSoilMax: the gate measured to the portfolio's barest
	// ground: the quantile of the other talhões' barest levels, and the
	// highest NDTI read as soil (0: any). Zero: off, the soil is p's
	// (Calibrate's or the reference). It gained nothing on the US-maize
	// world's full version and made 1.4–3.4 times the false steps on
	// development seeds 1–3 (TestUSWorldSoilGate, -tags research).
	pfSoilQ, pfSoilMax float64
	// stepSoilOracle, when > 0, is the soil NDTI the gate measures to
	// (the soil a harness world drew, an oracle).
	stepSoilOracle float64
}

// soil is the soil NDTI a research run measures the step test's gate
// to, instead of p's: the world's drawn soil (stepSoilOracle > 0), or,
// where p's soil is the reference one and pfSoilQ > 0, the portfolio's
// barest ground (Portfolio.soilNDTI, up to pfSoilMax when set); false
// otherwise.
func (k soilKnobs) soil(p Params) (float64, bool) {
	if k.stepSoilOracle > 0 {
		return k.stepSoilOracle, true
	}
	if p.Soil != spectral.Soil || !(k.pfSoilQ > 0) {
		return 0, false
	}
	if s, ok := p.portfolio.soilNDTI(k.pfSoilQ); ok && (k.pfSoilMax == 0 || s <= k.pfSoilMax) {
		return s, true
	}
	return 0, false
}

// portfolioSoilDates: a talhão's barest level is the lowest median of
// this many consecutive dates of its corrected series (one hazy, shadowed
// or snow-leaking date is not the ground).
const portfolioSoilDates = 3

// soilNDTI returns the NDTI of the barest ground the other talhões of the
// portfolio show: the q quantile, over them (at least portfolioMinPeers),
// of each one's lowest median of portfolioSoilDates consecutive dates of
// its corrected series; false without a portfolio or with too few. It is
// an upper bound of the region's soil NDTI (a tilled talhão keeps some
// straw). Research only (soilKnobs.pfSoilQ): the step test measured to it
// gained no balanced accuracy on the US-maize world and made 1.4–3.4
// times the false steps there on development seeds 1–3 (docs/tillage.md).
func (o *Portfolio) soilNDTI(q float64) (float64, bool) {
	if o == nil || o.region == nil {
		return 0, false
	}
	var v []float64
	var w [portfolioSoilDates]float64
	for g, y := range o.region.ys {
		low := math.NaN()
		for i := 0; g != o.self && i+portfolioSoilDates <= len(y); i++ {
			copy(w[:], y[i:i+portfolioSoilDates])
			if m := num.Median(w[:]); !(m >= low) {
				low = m
			}
		}
		if !math.IsNaN(low) {
			v = append(v, low)
		}
	}
	if len(v) < portfolioMinPeers {
		return 0, false
	}
	return num.Quantile(v, q), true
}

// stepTrend turns the trend-judged step on (trendKnobs; the -steptrend
// and -steptrend.v flags, trend_research_test.go); zero in the product.
// No variant of 42 beat Detect and the plain rule at equal false
// positives on every world's development seeds; the one held out changed
// no US verdict (docs/tillage.md, "The step judged against the longer
// trend").
var stepTrend trendKnobs

// stepTrendKnobs are the research run's trend knobs.
func stepTrendKnobs() trendKnobs { return stepTrend }
