package tillage

import (
	"math"
	"sort"
	"time"

	"github.com/manejo/manejo/internal/num"
)

// Offsets shared by the talhões of a portfolio (issue 30). On a short
// window the noise that hides a tillage is a date's, not a reading's: an
// offset of the NDTI shared by every point of a talhão on one date
// (cross-sensor band responses, Landsat 7 against Landsat 8 against
// Sentinel-2, BRDF, residual haze, a snow or wet morning over the whole
// scene). The talhões read on the same date by the same sensor share most
// of it, and a tillage is one talhão's: the median, over the other talhões,
// of the departure of each one's median NDTI on that date from its own
// level on the dates around it measures the offset without the talhão's
// own step in it. The step test subtracts it (Obs.Offset) before it
// judges the step against the date-to-date scatter that is left.

// Portfolio thresholds.
const (
	// portfolioDays: a talhão's level around a date is the median of its
	// other bare dates within this many days on either side (at least
	// portfolioMinLevel of them).
	portfolioDays     = 30
	portfolioMinLevel = 2
	// portfolioMinPeers: a date's offset for a talhão needs at least this
	// many other talhões read on that date by that sensor; fewer give no
	// offset (0): the median of two or three departures is about as noisy
	// as the departure it would remove.
	portfolioMinPeers = 4
	// portfolioPasses: the levels are measured again on the corrected
	// series (backfitting: a level of dates that all carry offsets is
	// itself offset).
	portfolioPasses = 2
)

// Medians is one talhão's series as the portfolio reads it: per date
// (when at least half of its interior cells are clear), the median NDTI of
// its interior cells on the dates bare of green and not wet — the dates
// the step test reads — and the sensor of the date. Build it with
// NewMedians.
type Medians struct {
	dates  []time.Time
	sensor []string
	ndti   []float64
}

// NewMedians returns the talhão's bare-date median series (see Medians).
// p's tuning is the one the step test uses (DefaultParams' unless changed).
func NewMedians(cells []Cell, p Params) Medians {
	p.tune = p.tune.withDefaults()
	interior := interiorObs(cells)
	var m Medians
	for _, o := range bareSeries(pooled(interior), p) {
		m.dates = append(m.dates, o.date)
		m.sensor = append(m.sensor, o.sensor)
		m.ndti = append(m.ndti, o.ndti)
	}
	return m
}

// Len is the number of dates of the series.
func (m Medians) Len() int { return len(m.dates) }

// Portfolio is what the other talhões of a portfolio say about one
// talhão's dates (NewPortfolios): the NDTI offset they share on each date
// and sensor, and how their own NDTI stepped at each date. The zero value
// (and nil) says nothing. Params.WithPortfolio hands it to the step test.
type Portfolio struct {
	off  map[offsetKey]float64
	peer map[time.Time]peerStep
	// region and self: every talhão's series corrected by the
	// portfolio's offsets (shared by all the portfolios of one
	// NewPortfolios call) and this talhão's index in it (residueAlike).
	region *regionSeries
	self   int
}

type offsetKey struct {
	date   time.Time
	sensor string
}

// peerStep is the other talhões' step of NDTI at a date, split there as
// the step test splits: the median of their drops and its robust spread
// (1.4826 MAD), from at least portfolioMinPeers of them.
type peerStep struct{ med, spread float64 }

// Offset returns the offset of the date and sensor, and false (0) when
// the portfolio had too few other talhões read then to measure it.
func (o *Portfolio) Offset(d time.Time, sensor string) (float64, bool) {
	if o == nil {
		return 0, false
	}
	v, ok := o.off[offsetKey{d, sensor}]
	return v, ok
}

// Len is the number of dates and sensors with an offset.
func (o *Portfolio) Len() int {
	if o == nil {
		return 0
	}
	return len(o.off)
}

// WithPortfolio returns p with the talhão's portfolio (NewPortfolios):
// the step test then removes the offsets it shares with the other talhões
// and asks its step to stand out of theirs. As Calibrate, it is per
// talhão; nil removes it.
func (p Params) WithPortfolio(pf *Portfolio) Params {
	p.portfolio = pf
	return p
}

// portfolioOnShort returns p with its portfolio's offsets kept only on the
// dates of the short pieces of pl (shortSegments), the ones the step test
// reads: a long history is judged by its own drops, and its evidence
// stays what it was without a portfolio.
func (p Params) portfolioOnShort(pl []pooledObs) Params {
	if p.portfolio == nil {
		return p
	}
	keep := map[time.Time]bool{}
	for _, seg := range shortSegments(pl) {
		for _, o := range seg {
			keep[o.Date] = true
		}
	}
	q := &Portfolio{off: map[offsetKey]float64{}, peer: p.portfolio.peer, region: p.portfolio.region, self: p.portfolio.self}
	for k, v := range p.portfolio.off {
		if keep[k.date] {
			q.off[k] = v
		}
	}
	p.portfolio = q
	return p
}

// NewPortfolios returns, for each talhão of a portfolio (the talhões
// analysed together: a batch of a run, the talhões of a table), what the
// others say about its dates:
//   - the NDTI offset of each of its dates that it shares with them: for
//     talhão f on date d read by sensor s, the median over the other
//     talhões read on d by s (at least portfolioMinPeers) of their
//     departure on d — their median NDTI minus the median of their own
//     bare dates within portfolioDays around d (d left out). The
//     departures are measured twice, the second time on the series
//     corrected by the first pass's offsets (backfitting);
//   - at each of its dates, the other talhões' step of corrected NDTI
//     split at that date (peerSteps);
//   - the others' corrected series, whose levels a low-residue window
//     must stand out of (residueAlike).
//
// A tillage is one talhão's and a minority's: the median of the others
// leaves it in the talhão's series; what the whole portfolio shares on a
// date (atmosphere, sensor calibration, a regional wetting or thaw) is
// taken out. A portfolio of fewer than portfolioMinPeers+1 talhões, or of
// talhões that share no date, says nothing.
func NewPortfolios(ms []Medians) []Portfolio {
	readers := map[offsetKey][]int{}
	for f, m := range ms {
		for i, d := range m.dates {
			k := offsetKey{d, m.sensor[i]}
			readers[k] = append(readers[k], f)
		}
	}
	shared := map[offsetKey]float64{} // the portfolio's offset of a key so far, all talhões
	for range portfolioPasses - 1 {
		dep := departures(ms, shared)
		for k, fs := range readers {
			if v := depsOf(dep, fs, k, -1); len(v) >= portfolioMinPeers {
				shared[k] += num.Median(v)
			}
		}
	}
	// The last pass: each talhão's offset from the others only.
	dep := departures(ms, shared)
	out := make([]Portfolio, len(ms))
	for f := range out {
		out[f] = Portfolio{off: map[offsetKey]float64{}}
	}
	for k, fs := range readers {
		for _, f := range fs {
			if v := depsOf(dep, fs, k, f); len(v) >= portfolioMinPeers {
				out[f].off[k] = shared[k] + num.Median(v)
			}
		}
	}
	peerSteps(ms, shared, out)
	rs := newRegionSeries(ms, shared)
	for f := range out {
		out[f].region, out[f].self = rs, f
	}
	return out
}

// peerSteps sets, for each talhão and each of its dates d, the other
// talhões' step at d (peerStep): each one's series corrected by the
// portfolio's offsets, its level of up to stepMaxDates dates within
// stepDays before d (at least stepMinPre) minus its level of up to as
// many from d (at least stepMinPost), means as the step test's.
func peerSteps(ms []Medians, shared map[offsetKey]float64, out []Portfolio) {
	ys := make([][]float64, len(ms))
	for f, m := range ms {
		ys[f] = make([]float64, len(m.ndti))
		for i := range m.ndti {
			ys[f][i] = m.ndti[i] - shared[offsetKey{m.dates[i], m.sensor[i]}]
		}
	}
	drop := func(g int, d time.Time) (float64, bool) {
		m := ms[g]
		j := sort.Search(len(m.dates), func(i int) bool { return !m.dates[i].Before(d) })
		var pre, post float64
		np, nq := 0, 0
		for i := j - 1; i >= 0 && np < stepMaxDates && d.Sub(m.dates[i]) <= stepDays*24*time.Hour; i-- {
			pre += ys[g][i]
			np++
		}
		for i := j; i < len(m.dates) && nq < stepMaxDates && m.dates[i].Sub(d) <= stepDays*24*time.Hour; i++ {
			post += ys[g][i]
			nq++
		}
		if np < stepMinPre || nq < stepMinPost {
			return 0, false
		}
		return pre/float64(np) - post/float64(nq), true
	}
	cache := map[time.Time][]float64{} // drops of every talhão at a date (NaN: none)
	for f, m := range ms {
		out[f].peer = map[time.Time]peerStep{}
		for _, d := range m.dates {
			all, ok := cache[d]
			if !ok {
				all = make([]float64, len(ms))
				for g := range ms {
					all[g] = math.NaN()
					if x, ok := drop(g, d); ok {
						all[g] = x
					}
				}
				cache[d] = all
			}
			var v []float64
			for g, x := range all {
				if g != f && !math.IsNaN(x) {
					v = append(v, x)
				}
			}
			if len(v) < portfolioMinPeers {
				continue
			}
			med := num.Median(v)
			// The spread from the talhões at or below the median: the
			// others tilled in the same weeks (conventional talhões till
			// at the same time of year) lie above it and would widen it.
			low := v[:0]
			for _, x := range v {
				if x <= med {
					low = append(low, med-x)
				}
			}
			out[f].peer[d] = peerStep{med: med, spread: 1.4826 * num.Median(low)}
		}
	}
}

// depsOf returns the departures on key k of the talhões fs, but not of
// talhão skip.
func depsOf(dep []map[offsetKey]float64, fs []int, k offsetKey, skip int) []float64 {
	var v []float64
	for _, g := range fs {
		if x, ok := dep[g][k]; ok && g != skip {
			v = append(v, x)
		}
	}
	return v
}

// departures returns each talhão's departure on each of its dates from
// its own level around the date (median of its other dates within
// portfolioDays, at least portfolioMinLevel), on the series corrected by
// off.
func departures(ms []Medians, off map[offsetKey]float64) []map[offsetKey]float64 {
	out := make([]map[offsetKey]float64, len(ms))
	win := portfolioDays * 24 * time.Hour
	var v []float64
	for f, m := range ms {
		out[f] = map[offsetKey]float64{}
		y := make([]float64, len(m.ndti))
		for i := range y {
			y[i] = m.ndti[i] - off[offsetKey{m.dates[i], m.sensor[i]}]
		}
		for i, d := range m.dates {
			lo := sort.Search(len(m.dates), func(j int) bool { return !m.dates[j].Before(d.Add(-win)) })
			v = v[:0]
			for j := lo; j < len(m.dates) && !m.dates[j].After(d.Add(win)); j++ {
				if j != i {
					v = append(v, y[j])
				}
			}
			if len(v) >= portfolioMinLevel {
				out[f][offsetKey{d, m.sensor[i]}] = y[i] - num.Median(v)
			}
		}
	}
	return out
}

// stepPeerK: a step must stand out of the other talhões' steps at its
// date by more than this many of their robust spreads (or of its own
// standard error, if larger).
const stepPeerK = 3.0

// stepsAlike reports whether the other talhões of the portfolio stepped
// at date d as this one did (levels l): its drop less their median drop
// is at most stepPeerK times the spread of their drops. The date's
// offsets are already removed; what this catches is a change the region
// shares over weeks with a response that differs from talhão to talhão
// (snowmelt, a wet spell, stover weathering), which the levels of dates
// around each date do not take out. False without a portfolio or with
// too few other talhões measured at d.
func (o *Portfolio) stepsAlike(d time.Time, l stepLevels) bool {
	if o == nil {
		return false
	}
	ps, ok := o.peer[d]
	if !ok {
		return false
	}
	return l.pre-l.post-ps.med <= stepPeerK*math.Max(ps.spread, l.se)
}

// thirdOnShort keeps the third test's breaks that stand out of the
// portfolio where the step test would judge them: a break on a short
// piece of pl (shortSegments) whose drop, measured as the step test
// measures it (stepSides on the corrected step series), the other talhões
// share (stepsAlike) is dropped. The third test's threshold is the
// talhão's own history of drops, blind to what the region shares over
// weeks (a wet spell, snowmelt). Without a portfolio, bs as they are.
func (p Params) thirdOnShort(pl []pooledObs, bs []Break) []Break {
	if p.portfolio.Len() == 0 || len(bs) == 0 {
		return bs
	}
	var out []Break
	for _, b := range bs {
		keep := true
		for _, seg := range shortSegments(pl) {
			if b.Date.Before(seg[0].Date) || b.Date.After(seg[len(seg)-1].Date) {
				continue
			}
			s := stepSeries(seg, p)
			j := sort.Search(len(s), func(i int) bool { return !s[i].date.Before(b.Date) })
			if j == 0 || j == len(s) {
				continue
			}
			l, _ := stepSides(s, j, seg, stepSigma(s, p.MinSigma), &p.tune)
			keep = !p.portfolio.stepsAlike(s[j].date, l)
		}
		if keep {
			out = append(out, b)
		}
	}
	return out
}
