package tillage

import (
	"math"
	"time"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/spectral"
)

// The fifth test (issue 30): a short window whose residue cover is that of
// intensive tillage. A talhão seen only from November to planting that was
// revolved in the autumn before the first reading shows no step at all:
// its straw is already buried. What it shows is a level: the straw share
// of its ground, r = straw/(straw+soil) of the pooled median reading
// unmixed against the talhão's soil (Calibrate), is low: its median over
// the window's bare dates lies below the bound. The bound is the one the tillage-system definitions use, not one
// fitted to a harness: intensive (conventional) tillage leaves less than
// 15 % of the soil surface covered by residue, reduced tillage 15–30 %,
// conservation tillage (no-till among them) 30 % or more (CTIC, the
// Conservation Technology Information Center's tillage-type definitions,
// used by USDA NRCS; Zheng et al. 2012 classify tillage from the minimum
// NDTI of such windows with the same classes). Leaving straw on the
// ground is what no-till is: after a harvest a no-till field holds the
// crop's residue until the next sowing.

// lowResidueCover is the CTIC bound of intensive tillage: residue cover
// below it (as a share of the ground not hidden by canopy).
const lowResidueCover = 0.15

// lowResidueReduced is the CTIC bound of conservation tillage: a ground
// with less residue than it has been revolved (conventional or reduced
// tillage, 15–30 %), one with more may be no-till. The low-residue test
// reads a level up to it only where the ground's answer to wetting says
// it holds little straw (wetSoilLike), since weathered or thin straw of
// a no-till field reads as less cover than it is.
const lowResidueReduced = 0.30

// wetStrawSlope is the wetting response of a ground that holds straw:
// over a window's bare dates, the slope of its median NDTI on
// log(SWIR/VNIR) (wetResponse). Wetting darkens SWIR more than the VNIR
// and lowers the NDTI of straw much more than that of soil (Quemada &
// Daughtry 2016), so a straw-covered ground's NDTI follows its wet dates
// and a revolved one's hardly does. Above the slope, the ground reads as
// straw: no low-residue event, whatever its level (review s7 #2: weathered
// straw reads as soil by its NDTI alone); at or below it, the level is
// read up to lowResidueReduced. Chosen on the short world's tuning seeds
// (0.03–0.10 give the same figures within 0.01; docs/tillage.md).
const wetStrawSlope = 0.05

// wetMinDates is the number of bare dates with reflectances the wetting
// response needs, wetMinWet how many of them must be wet (wetDate: SWIR
// darkened by more than a tenth against the dates around): without wet
// dates the slope would read the dates' calibration noise, not wetting.
// With fewer (or none: an NDTI-only table) the level is judged against
// lowResidueCover alone, as before.
const (
	wetMinDates = 6
	wetMinWet   = 2
)

// lowResidueZ is how many standard errors below the bound a level must lie.
const lowResidueZ = 1.0

// lowResidueMinDates is the number of bare dates a short piece needs for
// its residue level to be read (as many as the step test's two sides).
const lowResidueMinDates = stepMinPre + stepMinPost

// residueLevel is the residue cover of a short piece of the pooled series:
// the median straw share of the ground r over its bare dates (stepSeries:
// bare of green, not wet, the portfolio's and each sensor's offsets
// removed), its standard error (1.2533 σ/√n, σ the date-to-date scatter
// of r, robustSigma floored at MinSigma), the number of dates and the
// first and last of them.
type residueLevel struct {
	r, se float64
	// ndti is the median corrected NDTI of the bare dates and ndtiSE its
	// standard error (1.2533 σ/√n, σ their date-to-date scatter,
	// stepSigma): what the portfolio's peers are compared with.
	ndti, ndtiSE float64
	n            int
	first, last  time.Time
	// from is the first date of the piece's final run of dates whose
	// straw share is below the bound, prev the bare date before it
	// (zero when the run starts the piece).
	from, prev time.Time
	// wet is the ground's wetting response (wetResponse) and wetOK
	// whether it was measured; bound is the level a low-residue event
	// needs r below (lowResidueCover, lowResidueReduced, or 0 when the
	// ground answers wetting as straw does).
	wet   float64
	wetOK bool
	bound float64
}

// residueIn measures the residue level of one short piece, false when it
// holds fewer than lowResidueMinDates bare dates or p's endmembers cannot
// be unmixed. Each date's straw share is the larger of the one read
// against p's soil (the talhão's, Calibrate) and the one read against
// the reference soil (spectral.Soil): the soil fit moves with the
// readings it is fitted to (a talhão's own straw can pull its soil's NDTI
// up), and where it falls must not make a talhão read as revolved; it
// may only stop one from reading so (a dark soil below the reference's).
func residueIn(seg []pooledObs, p Params) (residueLevel, bool) {
	u, ok := newUnmixer(p)
	ref := p
	ref.Soil = spectral.Soil
	uRef, okRef := newUnmixer(ref)
	if !ok || !okRef {
		return residueLevel{}, false
	}
	s := stepSeries(seg, p)
	if len(s) < lowResidueMinDates {
		return residueLevel{}, false
	}
	ndvi := make(map[time.Time]float64, len(seg))
	for _, o := range seg {
		ndvi[o.Date] = o.NDVI
	}
	rs := make([]clearObs, 0, len(s))
	for _, o := range s {
		g, st, so := u.Fractions(ndvi[o.date], o.ndti)
		gr, str, sor := uRef.Fractions(ndvi[o.date], o.ndti)
		if math.IsNaN(g) || math.IsNaN(gr) {
			continue
		}
		c, cr := clearObs{date: o.date, green: g, straw: st, soil: so}, clearObs{green: gr, straw: str, soil: sor}
		if cr.strawShare() > c.strawShare() {
			c = cr
		}
		rs = append(rs, clearObs{date: o.date, value: c.strawShare(), noise: c.groundScale()})
	}
	if len(rs) < lowResidueMinDates {
		return residueLevel{}, false
	}
	v := make([]float64, len(rs))
	nd := make([]float64, len(s))
	for i, c := range rs {
		v[i] = c.value
	}
	for i, o := range s {
		nd[i] = o.ndti
	}
	sigma := robustSigma(rs, p.MinSigma, nil)
	l := residueLevel{r: num.Median(v), ndti: num.Median(nd), se: math.Sqrt(medianVar(len(v))) * sigma, n: len(v), first: rs[0].date, last: rs[len(rs)-1].date}
	l.ndtiSE = math.Sqrt(medianVar(len(nd))) * stepSigma(s, p.MinSigma)
	if !wetOff {
		l.wet, l.wetOK = wetResponse(seg, &p.tune)
	}
	l.bound = residueBound(l.wet, l.wetOK)
	l.from, l.prev = lowRun(rs, sigma, l.bound)
	return l, true
}

// residueBound is the level a low-residue event needs the straw share
// below, given the ground's wetting response: lowResidueCover when it was
// not measured, 0 (none) when the ground answers wetting as straw does,
// lowResidueReduced when it answers as soil.
func residueBound(wet float64, ok bool) float64 {
	switch {
	case !ok:
		return lowResidueCover
	case wet > wetStrawSlope:
		return 0
	default:
		return lowResidueReduced
	}
}

// wetResponse is the least-squares slope of the median NDTI on
// log(SWIR1+SWIR2 over Red+NIR) over the piece's bare dates (median NDVI
// in [stepSnowNDVI, mdBareNDVI), wet ones kept: their darkening is the
// signal) carrying reflectances, false with fewer than wetMinDates such
// dates, fewer than wetMinWet of them wet, or none that differ.
func wetResponse(seg []pooledObs, t *tuning) (float64, bool) {
	var xs, ys []float64
	nWet := 0
	for i, o := range seg {
		if !math.IsNaN(o.NDTI) && o.NDVI < t.mdBareNDVI && o.NDVI >= stepSnowNDVI && o.swir > 0 && o.vnir > 0 {
			xs, ys = append(xs, math.Log(o.swir/o.vnir)), append(ys, o.NDTI)
			if wetDate(seg, i, t.mdWet) {
				nWet++
			}
		}
	}
	if len(xs) < wetMinDates || nWet < wetMinWet {
		return 0, false
	}
	_, b, d := leastSquares(xs, ys)
	if !(d > 0) {
		return 0, false
	}
	return b, true
}

// lowRunK is how many date-to-date standard deviations above
// the bound a date's straw share must lie to end a run of low dates:
// one reading's noise (a wet or hazy date) must not, a season of straw
// must.
const lowRunK = 2.0

// lowRun returns the first date of the final run of rs (dated straw
// shares in value) not held above bound (no share above it by
// more than lowRunK σ, σ the date-to-date scatter) and the date before
// it (zero when the run starts rs). A revolving missed inside the piece
// lies before that run, not before the piece's first date: dating it
// there never gives T a year the talhão kept its straw.
func lowRun(rs []clearObs, sigma, bound float64) (from, prev time.Time) {
	held := func(c clearObs) bool { return c.value > bound+lowRunK*sigma }
	i := len(rs) - 1
	for i > 0 && (held(rs[i]) || !(rs[i].value < bound)) {
		i--
	}
	for i > 0 && !held(rs[i-1]) {
		i--
	}
	if i > 0 {
		prev = rs[i-1].date
	}
	return rs[i].date, prev
}

// lowResidueBreaks returns, for each short piece of pl (shortSegments)
// whose residue level is below its bound (residueBound), a break dated at the
// first date of the piece's final run of low dates (After = Date: the
// revolving happened on or before it; Before = the bare date before that
// run, or Date when the run starts the piece), with the level in
// PostLevel, the bound in PreLevel, its standard error in Sigma and
// (bound − level)/SE in MagnitudeSigma; a piece whose level the
// portfolio's other talhões share (residueAlike) has none.
func lowResidueBreaks(pl []pooledObs, p Params) []Break {
	var out []Break
	for _, seg := range shortSegments(pl) {
		l, ok := residueIn(seg, p)
		if !ok || !((l.bound-l.r)/l.se > lowResidueZ) {
			continue
		}
		if alike, _ := p.portfolio.residueAlike(l); alike {
			continue
		}
		before := l.prev
		if before.IsZero() {
			before = l.from
		}
		out = append(out, Break{Date: l.from, Before: before, After: l.from, Test: TestLowResidue,
			MagnitudeSigma: (l.bound - l.r) / l.se, Sigma: l.se, PreLevel: l.bound, PostLevel: l.r})
	}
	return out
}

// addLowResidue adds the low-residue breaks of pl whose short piece holds
// no event yet (a step dates a revolving better than a level does), each
// with the cells whose own median straw share of the ground on the
// piece's dates is below the bound counted as agreeing.
func addLowResidue(out []Event, pl []pooledObs, series []cellSeries, p Params) []Event {
	bs := lowResidueBreaks(pl, p)
	if len(bs) == 0 {
		return out
	}
	n := len(out)
	for _, seg := range shortSegments(pl) {
		lo, hi := seg[0].Date, seg[len(seg)-1].Date
		var b *Break
		for i := range bs {
			if !bs[i].Date.Before(lo) && !bs[i].Date.After(hi) {
				b = &bs[i]
			}
		}
		if b == nil || eventWithin(out[:n], lo, hi) {
			continue
		}
		ev := Event{Date: b.Date, Before: b.Before, After: b.After, Test: b.Test, MagnitudeSigma: b.MagnitudeSigma}
		for _, sr := range series {
			if cellResidueLow(sr.cs, lo, hi, p.tune.rPreGreen, b.PreLevel) {
				ev.NCells++
				if !sr.border {
					ev.NInterior++
				}
			}
		}
		if len(series) > 0 {
			ev.CellFraction = float64(ev.NCells) / float64(len(series))
		}
		out = append(out, ev)
	}
	return out
}

// eventWithin reports whether an event of ev is dated in [lo, hi].
func eventWithin(ev []Event, lo, hi time.Time) bool {
	for _, e := range ev {
		if !e.Date.Before(lo) && !e.Date.After(hi) {
			return true
		}
	}
	return false
}

// cellResidueLow reports whether a cell's median straw share of the
// ground over its clear readings in [lo, hi] with little canopy (green ≤
// maxGreen) is below bound (false without such readings).
func cellResidueLow(cs []clearObs, lo, hi time.Time, maxGreen, bound float64) bool {
	var v []float64
	for _, c := range cs {
		if !c.date.Before(lo) && !c.date.After(hi) && c.green <= maxGreen {
			v = append(v, c.strawShare())
		}
	}
	return len(v) > 0 && num.Median(v) < bound
}

// LowResidueCover and LowResidueReduced are the low-residue test's
// bounds (share of the ground covered by residue: without, and with, a
// wetting response that reads as soil), WetStrawSlope the response above
// which the ground reads as straw, and LowResidueZ the margin in
// standard errors.
const (
	LowResidueCover   = lowResidueCover
	LowResidueReduced = lowResidueReduced
	WetStrawSlope     = wetStrawSlope
	LowResidueZ       = lowResidueZ
)

// Residue is the residue cover of a short window of a talhão's series
// (WindowResidue): the median straw share of the ground over its bare
// dates, its standard error, the number of those dates and the first and
// last of them, and the portfolio's verdict.
type Residue struct {
	Share, SE   float64
	Dates       int
	First, Last time.Time
	// PeersJudged is true when the portfolio's other talhões were read
	// over the window (Params.WithPortfolio, enough of them with enough
	// dates); PeersAlike then says whether they read as little residue
	// (their median NDTI level is not above this talhão's by more than
	// three robust spreads): a level they share is not a revolving, so no
	// low-residue event, whatever Share.
	PeersJudged, PeersAlike bool
	// WetJudged is true when the ground's wetting response was measured
	// (at least six bare dates carrying reflectances), Wet that response
	// (the slope of the median NDTI on log(SWIR/VNIR): straw answers
	// wetting, soil hardly does), and Bound the share a low-residue event
	// needs Share below by more than LowResidueZ standard errors:
	// LowResidueCover unmeasured, LowResidueReduced when the ground
	// answers as soil (Wet ≤ WetStrawSlope), 0 (no event) as straw.
	WetJudged bool
	Wet       float64
	Bound     float64
}

// WindowResidue returns the residue cover the low-residue test read on
// the last short piece of the talhão's series (dates on or before asOf)
// holding at least lowResidueMinDates bare dates, and false when there is
// none (no short piece: a long history is judged by its own drops). It
// says how near a talhão without an event came to a low-residue one, as
// StrongestStep does for a step.
func WindowResidue(cells []Cell, p Params, asOf time.Time) (Residue, bool) {
	if p.Validate() != nil {
		return Residue{}, false
	}
	p.tune = p.tune.withDefaults()
	interior := interiorObs(cells)
	pl := pooled(interior)
	for len(pl) > 0 && pl[len(pl)-1].Date.After(asOf) {
		pl = pl[:len(pl)-1]
	}
	segs := shortSegments(pl)
	for k := len(segs) - 1; k >= 0; k-- {
		if l, ok := residueIn(segs[k], p); ok {
			r := Residue{Share: l.r, SE: l.se, Dates: l.n, First: l.first, Last: l.last, WetJudged: l.wetOK, Wet: l.wet, Bound: l.bound}
			r.PeersAlike, r.PeersJudged = p.portfolio.residueAlike(l)
			return r, true
		}
	}
	return Residue{}, false
}

// regionSeries is every talhão's bare-date median NDTI of a portfolio,
// corrected by the portfolio's offsets (NewPortfolios).
type regionSeries struct {
	ms []Medians
	ys [][]float64
}

func newRegionSeries(ms []Medians, shared map[offsetKey]float64) *regionSeries {
	rs := &regionSeries{ms: ms, ys: make([][]float64, len(ms))}
	for f, m := range ms {
		rs.ys[f] = make([]float64, len(m.ndti))
		for i := range m.ndti {
			rs.ys[f][i] = m.ndti[i] - shared[offsetKey{m.dates[i], m.sensor[i]}]
		}
	}
	return rs
}

// residueAlike reports whether the other talhões of the portfolio read
// as little residue as this one over the dates of l: its median
// corrected NDTI there (l.ndti) does not lie below the median of theirs
// (each over at least lowResidueMinDates dates, at least
// portfolioMinPeers talhões) by more than stepPeerK spreads, the spread
// being the robust spread of the levels at or above that median (the
// talhões holding their straw; the others tilled lie below it), floored
// at the standard error of l.ndti (a homogeneous region's spread near 0
// must not make a talhão a hair below it stand out; stepsAlike floors at
// the step's own error the same way). A region whose straw reads low
// (weathered stover, a bright soil, a sensor's calibration) reads low on
// every talhão; a revolving is one talhão's. judged is false, and alike
// too, without a portfolio or with too few others measured.
func (o *Portfolio) residueAlike(l residueLevel) (alike, judged bool) {
	if o == nil || o.region == nil {
		return false, false
	}
	var lv, tmp []float64
	for g, m := range o.region.ms {
		if g == o.self {
			continue
		}
		tmp = tmp[:0]
		for i, d := range m.dates {
			if !d.Before(l.first) && !d.After(l.last) {
				tmp = append(tmp, o.region.ys[g][i])
			}
		}
		if len(tmp) >= lowResidueMinDates {
			lv = append(lv, num.Median(tmp))
		}
	}
	if len(lv) < portfolioMinPeers {
		return false, false
	}
	med := num.Median(lv)
	var high []float64
	for _, x := range lv {
		if x >= med {
			high = append(high, x-med)
		}
	}
	spread := math.Max(1.4826*num.Median(high), l.ndtiSE)
	return l.ndti >= med-stepPeerK*spread, true
}
