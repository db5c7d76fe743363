package tillage

import (
	"math"
	"time"
)

// The step test judged against the piece's longer trend (issue 30,
// session 12; research, off in the product: trendKnobs). The step test
// compares two flat levels either side of a split, and its ramp check
// (stepIsRamp) a line through the same dates. Residue weathering over a
// winter, a season drying or thawing, drift over months: a split read
// against a line fitted over a longer span (trendKnobs.days on each side,
// up to a canopy) is then a step on top of that line, y = a + b·x + c·[x ≥
// 0] against y = a + b·x alone, and its drop is −c, free of the slope the
// two flat levels read as part of it. Measured, not adopted: the false
// moderate steps of the US-maize world are steps, not ramps, and the
// trend's slope costs the step test power (docs/tillage.md, "The step
// judged against the longer trend").
//
// Two things to mend before adopting it (review s12): trendStep fits
// unweighted, so a date read from few points (stepObs.scale, dateScale
// with -pooledweight) counts as a half-share one in its z; and the Break
// it passes keeps the two-level z as MagnitudeSigma, which with z2 below
// stepK can fall below StepK, where pipeline's strongestStep tells a
// talhão without an event that an event needs StepK standard errors.

// trendFit is the least-squares fit y = a + b·x + c·[after] on (xs, ys),
// with v = Var(c)/σ² (1/Σd̃², d̃ the step indicator's residual on the line;
// Frisch–Waugh–Lovell); v is +Inf and c 0 when the indicator is a line of
// xs (no date on a side, or too few). The line is the fits of y and of the
// indicator on x combined: OLS is linear in y, so a + b·x is the fit of
// y − c·[after].
func trendFit(xs, ys []float64, after []bool) (a, b, c, v float64) {
	d := make([]float64, len(xs))
	for i, a := range after {
		if a {
			d[i] = 1
		}
	}
	ad, bd, _ := leastSquares(xs, d)
	ay, by, _ := leastSquares(xs, ys)
	var sdy, sdd float64
	for i, x := range xs {
		rd := d[i] - ad - bd*x
		sdy += rd * (ys[i] - ay - by*x)
		sdd += rd * rd
	}
	if !(sdd > 1e-9) {
		return ay, by, 0, math.Inf(1)
	}
	c = sdy / sdd
	return ay - c*ad, by - c*bd, c, 1 / sdd
}

// trendSpan returns the dates of s either side of the split at s[j] (s[j]
// the first date after): before it, those within days of s[j-1], the last
// date before; after it, those within days of s[j]. So a wide revisit gap
// at the split does not shorten the before side, which can then reach
// further back than days from s[j] (stepSides' convention). Each side
// stops at a canopy of the pooled series as the levels do. It returns the
// dates' days from s[j], their NDTI, and which lie after.
func trendSpan(s []stepObs, j int, pl []pooledObs, days float64, t *tuning) (xs, ys []float64, after []bool) {
	span := time.Duration(days * 24 * float64(time.Hour))
	lo := j
	for lo > 0 && s[j-1].date.Sub(s[lo-1].date) <= span && !canopyBetween(pl, s[lo-1].date, s[j-1].date, t) {
		lo--
	}
	hi := j
	for hi < len(s) && s[hi].date.Sub(s[j].date) <= span && !canopyBetween(pl, s[j].date, s[hi].date, t) {
		hi++
	}
	for i := lo; i < hi; i++ {
		xs = append(xs, s[i].date.Sub(s[j].date).Hours()/24)
		ys = append(ys, s[i].ndti)
		after = append(after, i >= j)
	}
	return xs, ys, after
}

// trendStep is the drop at s[j] on top of the trend of the dates within
// days on each side (trendSpan, trendFit) and its standard error with σ
// the noise of one date; dates more than 3σ from the first fit (a snow
// leak, a hazy date) are left out of the second. ok is false when a side
// holds fewer than stepMinPre / stepMinPost dates.
func trendStep(s []stepObs, j int, pl []pooledObs, sigma, days float64, t *tuning) (drop, se float64, ok bool) {
	xs, ys, after := trendSpan(s, j, pl, days, t)
	if !trendSides(after) {
		return 0, 0, false
	}
	a, b, c, _ := trendFit(xs, ys, after)
	var kx, ky []float64
	var ka []bool
	for i, x := range xs {
		m := a + b*x
		if after[i] {
			m += c
		}
		if math.Abs(ys[i]-m) <= 3*sigma {
			kx, ky, ka = append(kx, x), append(ky, ys[i]), append(ka, after[i])
		}
	}
	if !trendSides(ka) {
		return 0, 0, false
	}
	_, _, c, v := trendFit(kx, ky, ka)
	return -c, sigma * math.Sqrt(v), true
}

// trendSides reports whether after holds at least stepMinPre dates
// before and stepMinPost after.
func trendSides(after []bool) bool {
	n := 0
	for _, a := range after {
		if a {
			n++
		}
	}
	return len(after)-n >= stepMinPre && n >= stepMinPost
}

// trendKnobs turn the trend-judged step on (research: stepTrendKnobs;
// the product's are zero, off).
type trendKnobs struct {
	// days is the span on each side of the split the trend is fitted
	// over; 0: off, the step test as in the product.
	days float64
	// rel and z2: a candidate split needs a two-level drop of rel of the
	// way to the soil's NDTI and z2 standard errors (the product's gate
	// and stepK, relaxed); zt and rel: the drop on top of the trend
	// (trendStep) must exceed zt standard errors and reach rel of the way.
	rel, z2, zt float64
	// mild: the trend judges only the steps below the product's gate or
	// stepK; the others pass or fail as in the product.
	mild bool
}

// floors are the gate and z a candidate split must reach: the product's
// (rel, z) or, with the trend on, the lower of each pair.
func (k trendKnobs) floors(rel, z float64) (float64, float64) {
	if k.days > 0 {
		return math.Min(rel, k.rel), math.Min(z, k.z2)
	}
	return rel, z
}
