package tillage

import (
	"math"
	"sort"
	"time"
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
	var interior [][]Obs
	for _, c := range cells {
		if !c.Border {
			interior = append(interior, c.Obs)
		}
	}
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

// Offsets is the NDTI offset of each date and sensor of one talhão shared
// with the other talhões of its portfolio (PortfolioOffsets). The zero
// value knows no offset.
type Offsets struct{ m map[offsetKey]float64 }

type offsetKey struct {
	date   time.Time
	sensor string
}

// At returns the offset of the date and sensor, and false (0) when the
// portfolio had too few other talhões read then to measure it.
func (o Offsets) At(d time.Time, sensor string) (float64, bool) {
	v, ok := o.m[offsetKey{d, sensor}]
	return v, ok
}

// Len is the number of dates and sensors with an offset.
func (o Offsets) Len() int { return len(o.m) }

// PortfolioOffsets returns, for each talhão of a portfolio (the talhões
// analysed together: a batch of a run, the talhões of a table), the NDTI
// offset of each of its dates that it shares with the others: for talhão
// f on date d read by sensor s, the median over the other talhões read on
// d by s (at least portfolioMinPeers) of their departure on d — their
// median NDTI minus the median of their own bare dates within
// portfolioDays around d (d left out). The departures are measured twice,
// the second time on the series corrected by the first pass's offsets. A
// tillage is one talhão's and a minority's: the median of the others
// leaves it in the talhão's series; what the whole portfolio shares on a
// date (atmosphere, sensor calibration, a regional wetting or thaw) is
// taken out. A portfolio of one talhão, or of talhões that share no date,
// gets no offset.
func PortfolioOffsets(ms []Medians) []Offsets {
	// keys of every (date, sensor) and who reads it.
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
				shared[k] += median(v)
			}
		}
	}
	// The last pass: each talhão's offset from the others only.
	dep := departures(ms, shared)
	out := make([]Offsets, len(ms))
	for f := range out {
		out[f] = Offsets{m: map[offsetKey]float64{}}
	}
	for k, fs := range readers {
		for _, f := range fs {
			if v := depsOf(dep, fs, k, f); len(v) >= portfolioMinPeers {
				out[f].m[k] = shared[k] + median(v)
			}
		}
	}
	return out
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
				out[f][offsetKey{d, m.sensor[i]}] = y[i] - median(v)
			}
		}
	}
	return out
}

// offsetOf returns the portfolio offset carried by a pooled date (0 when
// none was given).
func offsetOf(o pooledObs) float64 {
	if math.IsNaN(o.offset) {
		return 0
	}
	return o.offset
}

// offsetsOnShort returns pl with the portfolio's offsets kept only on the
// short pieces of the series (shortSegments), the ones the step test
// reads: a long history is judged by its own drops, and its evidence
// stays what it was without a portfolio.
func offsetsOnShort(pl []pooledObs) []pooledObs {
	out := append([]pooledObs(nil), pl...)
	keep := map[time.Time]bool{}
	for _, seg := range shortSegments(pl) {
		for _, o := range seg {
			keep[o.Date] = true
		}
	}
	for i := range out {
		if !keep[out[i].Date] {
			out[i].offset = 0
		}
	}
	return out
}
