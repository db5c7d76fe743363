package tillage

import (
	"math"
	"sort"
	"time"

	"github.com/manejo/manejo/internal/num"
)

// The fourth test (issue 30): a persistent step of the talhão's median NDTI
// judged over several dates on each side. On short and gappy series (a
// window of four to six months, Landsat 7 SLC-off gaps, mixed sensors) the
// noise that hides a tillage is not a reading's but a date's: an offset
// shared by every point of the talhão on one date (cross-sensor band
// responses, BRDF, residual haze, wet mornings). A level of three dates
// (the third test) does not average it out; a level of up to stepMaxDates
// dates on each side does, once the per-sensor offsets are removed. The
// noise it is judged by is the date-to-date scatter of the same corrected
// median series (robustSigma), so a talhão with two months of history
// speaks with the noise of its own window.

// Thresholds of the step test (stepBreaks), fixed on the tuning seeds of
// the short-series world (docs/tillage.md, "Short series").
const (
	stepMaxDates = 8  // dates averaged on each side at most
	stepMinPre   = 2  // dates before, at least
	stepMinPost  = 3  // dates after, at least: a persistent drop
	stepDays     = 60 // days each side the levels reach
	stepMaxGap   = 45 // days between the last date before and the first after, at most
	// stepPairDays: a sensor's offset is measured against the reference
	// sensor's dates within this many days.
	stepPairDays = 16
	stepSnowNDVI = 0.05
	// stepSegGap and stepShortDays: the pooled series is cut where no
	// clear date falls for more than stepSegGap days (a table of
	// November–May windows, a season of clouds); the step test reads the
	// pieces shorter than stepShortDays. A longer piece holds a history
	// whose own drops set the threshold (the third test: Portaria 349,
	// 6.8, "limiar histórico"); on the long-series harnesses the step test
	// there added false events (docs/tillage.md, "Short series").
	stepSegGap    = 90
	stepShortDays = 300
)

// stepK is the step test's threshold in standard errors: the largest of
// many candidate splits is taken, so a single split's K = 3 would fire on
// noise (a scan over ~20 splits of a short window).
const stepK = 4.0

// stepObs is one date of the bare pooled series: the median NDTI corrected
// for its sensor's offset, and the sensor.
type stepObs struct {
	date       time.Time
	ndti       float64
	swir, vnir float64 // median SWIR1+SWIR2 and Red+NIR (0: not read)
	sensor     string
	offset     float64 // the portfolio's offset of the date (Params.WithPortfolio)
	// scale is the date's noise relative to σ (dateScale of the share of
	// the interior cells clear on it; 1 in the product).
	scale float64
}

// stepSeries returns the dates of the pooled series bare of green (median
// NDVI below mdBareNDVI) and not wet, their median NDTI with the offset the
// portfolio shares on the date removed (Params.WithPortfolio), then
// each sensor's offset against the most frequent sensor (sensorOffsets).
func stepSeries(pl []pooledObs, p Params) []stepObs {
	out := bareSeries(pl, p)
	for i := range out {
		out[i].ndti -= out[i].offset
	}
	off := sensorOffsets(out)
	for i := range out {
		out[i].ndti -= off[out[i].sensor]
	}
	return out
}

// bareSeries returns the dates of the pooled series bare of green (median
// NDVI below mdBareNDVI, at least stepSnowNDVI) and not wet, with their
// median NDTI as read and the portfolio's offset of the date (0: none).
func bareSeries(pl []pooledObs, p Params) []stepObs {
	t := &p.tune
	var out []stepObs
	for i, o := range pl {
		if math.IsNaN(o.NDTI) || math.IsNaN(o.NDVI) || o.NDVI >= t.mdBareNDVI || o.NDVI < stepSnowNDVI || wetDate(pl, i, t.mdWet) {
			continue
		}
		off, _ := p.portfolio.Offset(o.Date, o.sensor)
		out = append(out, stepObs{date: o.Date, ndti: o.NDTI, swir: o.swir, vnir: o.vnir, sensor: o.sensor, offset: off, scale: dateScale(o.share)})
	}
	return out
}

// sensorOffsets returns, per sensor, its median offset against the most
// frequent sensor: the median over its dates of the difference between its
// value and the median of the reference sensor's dates within stepPairDays
// (at least three such dates; the reference sensor's offset is 0). Cross-
// sensor differences of NDTI are of a few hundredths (band responses and
// calibration, Roy et al. 2016; Claverie et al. 2018), as large as the
// drop of a chisel pass on little straw.
func sensorOffsets(s []stepObs) map[string]float64 {
	count := map[string]int{}
	for _, o := range s {
		count[o.sensor]++
	}
	ref, best := "", 0
	for k, n := range count {
		if n > best || (n == best && k < ref) {
			ref, best = k, n
		}
	}
	off := map[string]float64{}
	if len(count) < 2 {
		return off
	}
	diffs := map[string][]float64{}
	var near []float64
	for _, o := range s {
		if o.sensor == ref {
			continue
		}
		near = near[:0]
		for _, r := range s {
			if r.sensor == ref && absDur(r.date.Sub(o.date)) <= stepPairDays*24*time.Hour {
				near = append(near, r.ndti)
			}
		}
		if len(near) > 0 {
			diffs[o.sensor] = append(diffs[o.sensor], o.ndti-num.Median(near))
		}
	}
	for k, d := range diffs {
		if len(d) >= 3 {
			off[k] = num.Median(d)
		}
	}
	return off
}

// noiseScale is o.scale, or 1 when unset.
func (o stepObs) noiseScale() float64 {
	if o.scale > 0 {
		return o.scale
	}
	return 1
}

// stepSigma is the noise of one date of the step series: the date-to-date
// scatter of its corrected median NDTI (robustSigma, floored at min).
func stepSigma(s []stepObs, min float64) float64 {
	cs := make([]clearObs, len(s))
	for i, o := range s {
		cs[i] = clearObs{date: o.date, value: o.ndti, noise: o.scale}
	}
	return robustSigma(cs, min, make([]float64, 0, len(cs)))
}

// stepLevels are the two sides of a candidate step at s[j]: their levels,
// date counts and the standard error of the drop.
type stepLevels struct {
	pre, post, se float64
	npre, npost   int
}

// stepAt measures the step with s[j] as the first date after (stepSides),
// false when the gap before s[j] exceeds stepMaxGap days or a side holds
// fewer than stepMinPre / stepMinPost dates.
func stepAt(s []stepObs, j int, pl []pooledObs, sigma float64, t *tuning) (stepLevels, bool) {
	if j < 1 || s[j].date.Sub(s[j-1].date) > stepMaxGap*24*time.Hour {
		return stepLevels{}, false
	}
	l, _ := stepSides(s, j, pl, sigma, t)
	return l, l.npre >= stepMinPre && l.npost >= stepMinPost
}

// stepSides measures the two sides of s[j]: levels of up to stepMaxDates
// dates within stepDays on each side, stopping at a canopy date of the
// pooled series (a crop or weed flush is another surface), each the mean
// of the dates within 3σ of their median (level), and the sensors of
// those dates. A side without dates has a NaN level.
func stepSides(s []stepObs, j int, pl []pooledObs, sigma float64, t *tuning) (stepLevels, []string) {
	var preArr, postArr, preSc, postSc, tmp [stepMaxDates]float64
	var sensors []string
	pre, psc := preArr[:0], preSc[:0]
	for i := j - 1; i >= 0 && len(pre) < stepMaxDates && s[j-1].date.Sub(s[i].date) <= stepDays*24*time.Hour; i-- {
		if canopyBetween(pl, s[i].date, s[j-1].date, t) {
			break
		}
		pre, psc = append(pre, s[i].ndti), append(psc, s[i].noiseScale())
		sensors = append(sensors, s[i].sensor)
	}
	post, qsc := postArr[:0], postSc[:0]
	for i := j; i < len(s) && len(post) < stepMaxDates && s[i].date.Sub(s[j].date) <= stepDays*24*time.Hour; i++ {
		if canopyBetween(pl, s[j].date, s[i].date, t) {
			break
		}
		post, qsc = append(post, s[i].ndti), append(qsc, s[i].noiseScale())
		sensors = append(sensors, s[i].sensor)
	}
	l := stepLevels{pre: math.NaN(), post: math.NaN(), se: math.NaN(), npre: len(pre), npost: len(post)}
	var sa, sb float64
	if len(pre) > 0 {
		l.pre, sa = level(pre, psc, sigma, 3, tmp[:0])
	}
	if len(post) > 0 {
		l.post, sb = level(post, qsc, sigma, 3, tmp[:0])
	}
	if len(pre) > 0 && len(post) > 0 {
		l.se = math.Hypot(sa, sb)
	}
	return l, sensors
}

// canopyBetween reports whether the pooled series shows a canopy (median
// NDVI ≥ mdCanopyNDVI) on a date in [a, b].
func canopyBetween(pl []pooledObs, a, b time.Time, t *tuning) bool {
	i := sort.Search(len(pl), func(i int) bool { return !pl[i].Date.Before(a) })
	for ; i < len(pl) && !pl[i].Date.After(b); i++ {
		if pl[i].NDVI >= t.mdCanopyNDVI {
			return true
		}
	}
	return false
}

// stepBreaks is the talhão's fourth test: a drop of the corrected median
// NDTI (stepSeries) larger than stepK standard errors of the two levels,
// with σ the date-to-date scatter of the same series (robustSigma, floored
// at MinSigma); the split with the largest z among neighbouring candidates
// dates it. As the third test: no canopy in the mdCanopyDays before (a
// harvest lowers NDTI too), and the drop reaches stepRel (mdRel, 0.4,
// unless a research run varies it) of the way from the level before to
// the soil's NDTI (a wet season's onset narrows NDTI by
// less). A step, not a ramp: the two levels fit the dates of both sides
// no worse than a straight line does (residue decaying is a ramp).
func stepBreaks(pl []pooledObs, p Params) []Break {
	var out []Break
	for _, seg := range shortSegments(pl) {
		out = append(out, stepBreaksIn(seg, p)...)
	}
	return out
}

// shortSegments cuts pl where no clear date falls for more than stepSegGap
// days and returns the pieces spanning less than stepShortDays.
func shortSegments(pl []pooledObs) [][]pooledObs {
	var out [][]pooledObs
	lo, last := -1, -1
	flush := func(hi int) {
		if lo >= 0 && pl[last].Date.Sub(pl[lo].Date) < stepShortDays*24*time.Hour {
			out = append(out, pl[lo:hi])
		}
	}
	for i, o := range pl {
		if math.IsNaN(o.NDVI) || math.IsNaN(o.NDTI) {
			continue
		}
		if last >= 0 && o.Date.Sub(pl[last].Date) > stepSegGap*24*time.Hour {
			flush(last + 1)
			lo = -1
		}
		if lo < 0 {
			lo = i
		}
		last = i
	}
	if last >= 0 {
		flush(last + 1)
	}
	return out
}

// stepBreaksIn is stepBreaks on one short piece of the pooled series.
func stepBreaksIn(pl []pooledObs, p Params) []Break {
	t := &p.tune
	s := stepSeries(pl, p)
	if len(s) < stepMinPre+stepMinPost {
		return nil
	}
	sigma := stepSigma(s, p.MinSigma)
	soil := p.stepSoil()
	rel, zMin := stepTrendKnobs().floors(t.stepRel, stepK)
	z := make([]float64, len(s))
	lv := make([]stepLevels, len(s))
	for j := range s {
		z[j] = math.NaN()
		l, ok := stepAt(s, j, pl, sigma, t)
		if !ok || canopyBefore(pl, s[j].date, t) || l.pre-l.post < rel*(l.pre-soil) || stepLate(s, j, l) {
			continue
		}
		z[j], lv[j] = (l.pre-l.post)/l.se, l
	}
	var out []Break
	for j := 0; j < len(s); j++ {
		if !(z[j] > zMin) {
			continue
		}
		// The best split among the candidates within stepMaxGap days.
		for k := j + 1; k < len(s) && s[k].date.Sub(s[j].date) <= stepMaxGap*24*time.Hour; k++ {
			if z[k] > z[j] {
				j = k
			}
		}
		if !p.stepPasses(s, j, lv[j], z[j], pl, sigma, soil) {
			continue
		}
		out = append(out, Break{Date: s[j].date, Before: s[j-1].date, After: s[j].date, Test: TestNDTIStep,
			MagnitudeSigma: z[j], Sigma: sigma, PreLevel: lv[j].pre, PostLevel: lv[j].post})
		for j+1 < len(s) && s[j+1].date.Sub(s[j].date) <= persistDays*24*time.Hour {
			j++
		}
	}
	return out
}

// stepPasses judges the best split s[j] of a neighbourhood, with levels
// l and z: a drop of stepK standard errors reaching stepRel of the way to
// soil, not a ramp (stepIsRamp) — or, with the trend on (trendKnobs), a
// drop on top of the longer trend (trendStep) — that does not recover,
// is not the surface getting wet and is not the portfolio's.
func (p Params) stepPasses(s []stepObs, j int, l stepLevels, z float64, pl []pooledObs, sigma, soil float64) bool {
	t := &p.tune
	tk := stepTrendKnobs()
	strong := z > stepK && l.pre-l.post >= t.stepRel*(l.pre-soil)
	if tk.days > 0 && !(tk.mild && strong) {
		d, se, ok := trendStep(s, j, pl, sigma, tk.days, t)
		if !ok || !(d/se > tk.zt) || d < tk.rel*(l.pre-soil) {
			return false
		}
	} else if !strong || stepIsRamp(s, j, l, sigma) {
		return false
	}
	return !stepRecovers(s, j, l, pl, t) && !stepWet(s, j, l) && !p.portfolio.stepsAlike(s[j].date, l)
}

// stepSoil is the soil NDTI the step test's relative gate measures to:
// p's soil (Calibrate's fit, or the reference). A research run may
// measure it elsewhere (soilKnobs.soil, research.go).
func (p Params) stepSoil() float64 {
	if s, ok := p.tune.soilKnobs.soil(p); ok {
		return s
	}
	return p.Soil.NDTI
}

// stepLate reports whether the split at s[j] comes after the drop: the
// last date before it already lies nearer the level after than the level
// before. Its level, trimmed of that date as residue, can still score the
// largest z, and the step is then dated late and read as a ramp.
func stepLate(s []stepObs, j int, l stepLevels) bool {
	return s[j-1].ndti < (l.pre+l.post)/2
}

// stepRecovers reports whether the median NDTI came back after the step:
// the mean of the bare dates after the level after, up to the end of the
// piece or the next canopy (at least two), is above the midpoint of the
// two levels. Tillage buries straw until the next crop; a wet or frozen
// spell, a thaw, a snow leak lower NDTI for weeks and then pass.
func stepRecovers(s []stepObs, j int, l stepLevels, pl []pooledObs, t *tuning) bool {
	var sum float64
	n := 0
	for i := j + l.npost; i < len(s); i++ {
		if canopyBetween(pl, s[j].date, s[i].date, t) {
			break
		}
		sum += s[i].ndti
		n++
	}
	return n >= 2 && sum/float64(n) > (l.pre+l.post)/2
}

// stepWetMargin and stepWetSWIR: a step is a wetting when SWIR1+SWIR2
// darkened more than Red+NIR by more than stepWetMargin (ratios of the
// levels) and by more than a tenth (stepWetSWIR): water that lowers NDTI
// by a tillage's few hundredths darkens the SWIR by far more than the few
// per cent calibration and BRDF move it.
const (
	stepWetMargin = 0.05
	stepWetSWIR   = 0.9
)

// stepWet reports whether the step reads as the surface getting wet (a
// wet or thawing spell lasting weeks) rather than straw buried: water
// absorbs in the SWIR far more than in the red and NIR, so wetting darkens
// SWIR1+SWIR2 by more than it darkens Red+NIR (Lobell & Asner 2002;
// Quemada & Daughtry 2016), while burying straw under soil darkens Red+NIR
// at least as much (crop residue is brighter than soil in the VNIR,
// Daughtry & Hunt 2008). Ratios of the medians of the two levels' dates;
// false when the dates carry no reflectances.
func stepWet(s []stepObs, j int, l stepLevels) bool {
	med := func(lo, hi int, f func(stepObs) float64) float64 {
		var v []float64
		for i := lo; i < hi; i++ {
			if x := f(s[i]); x > 0 {
				v = append(v, x)
			}
		}
		return num.Median(v)
	}
	sw := func(o stepObs) float64 { return o.swir }
	vn := func(o stepObs) float64 { return o.vnir }
	rs := med(j, j+l.npost, sw) / med(j-l.npre, j, sw)
	rv := med(j, j+l.npost, vn) / med(j-l.npre, j, vn)
	return rs < stepWetSWIR && rs < rv-stepWetMargin
}

// stepIsRamp reports whether a straight line through the dates of both
// levels fits them better than the two levels do, by more than two
// dates' noise variance (sum of squared residuals; both models have two
// parameters, and on a short noisy window either wins a coin toss when
// the step is small): residue decaying, or a season drifting, not a step.
func stepIsRamp(s []stepObs, j int, l stepLevels, sigma float64) bool {
	lo, hi := j-l.npre, j+l.npost
	var xs, ys []float64
	for i := lo; i < hi; i++ {
		xs = append(xs, s[i].date.Sub(s[lo].date).Hours()/24)
		ys = append(ys, s[i].ndti)
	}
	var rssStep float64
	for i, y := range ys {
		m := l.pre
		if lo+i >= j {
			m = l.post
		}
		rssStep += (y - m) * (y - m)
	}
	return rssStep > lineRSS(xs, ys)+2*sigma*sigma
}

// lineRSS is the residual sum of squares of the least-squares line of ys
// on xs.
func lineRSS(xs, ys []float64) float64 {
	a, b, _ := leastSquares(xs, ys)
	var rss float64
	for i := range xs {
		e := ys[i] - a - b*xs[i]
		rss += e * e
	}
	return rss
}

// leastSquares is the least-squares line y = a + b·x of ys on xs, with
// d = n·Σx² − (Σx)² (n² times the variance of xs): b is 0 when d is 0.
func leastSquares(xs, ys []float64) (a, b, d float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d = n*sxx - sx*sx
	if d != 0 {
		b = (n*sxy - sx*sy) / d
	}
	return (sy - b*sx) / n, b, d
}

// StrongestStep returns the largest drop of the talhão's median NDTI that
// the step test measured on the short pieces of its series (stepBreaks'
// candidates, before its threshold and guards; on or before asOf), with
// its z in MagnitudeSigma, its levels in PreLevel and PostLevel and the
// noise of one date in Sigma, and false when no candidate could be
// measured. It says how near the series came to an event when Detect
// found none: a talhão without an event is not silently "untilled".
func StrongestStep(cells []Cell, p Params, asOf time.Time) (Break, bool) {
	if p.Validate() != nil {
		return Break{}, false
	}
	p.tune = p.tune.withDefaults()
	interior := interiorObs(cells)
	best, found := Break{MagnitudeSigma: math.Inf(-1)}, false
	for _, pl := range shortSegments(stepPooled(interior, pooled(interior))) {
		s := stepSeries(pl, p)
		sigma := stepSigma(s, p.MinSigma)
		for j := range s {
			if s[j].date.After(asOf) {
				break
			}
			l, ok := stepAt(s, j, pl, sigma, &p.tune)
			if z := (l.pre - l.post) / l.se; ok && z > best.MagnitudeSigma {
				best = Break{Date: s[j].date, Before: s[j-1].date, After: s[j].date, Test: TestNDTIStep,
					MagnitudeSigma: z, Sigma: sigma, PreLevel: l.pre, PostLevel: l.post}
				found = true
			}
		}
	}
	return best, found
}

// StepK is the step test's threshold, in standard errors (see stepBreaks).
const StepK = stepK

// interiorObs returns the observations of the interior cells (not Border)
// of cells, in their order: what the talhão-level tests pool.
func interiorObs(cells []Cell) [][]Obs {
	var out [][]Obs
	for _, c := range cells {
		if !c.Border {
			out = append(out, c.Obs)
		}
	}
	return out
}
