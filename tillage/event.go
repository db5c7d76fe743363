package tillage

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/manejo/manejo/internal/num"
)

// ErrParams is wrapped by Params.Validate for any unusable parameter.
var ErrParams = errors.New("tillage: invalid parameter")

func paramError(name, msg string) error { return fmt.Errorf("%w: %s %s", ErrParams, name, msg) }

// Cell is one quadrícula's series as the talhão detector needs it.
type Cell struct {
	ID string
	// Border marks headland / edge cells (grid.Cell.Border): IN 2.3 allows
	// localized revolving there, so they never make an event on their own.
	Border bool
	Obs    []Obs
}

// Event is a talhão-level soil-revolving event (SINM interpretacoesManejo,
// operacao "Revolvimento do solo").
type Event struct {
	// Date is the event date reported to SINM: the first post-break clear
	// observation of the candidate break the interior cells agreed with
	// (a break of the pooled interior series, or else of one cell; see
	// Detect). Before is that break's last pre-break observation, After
	// equals Date; the operation happened in (Before, After].
	Date, Before, After time.Time
	// CellFraction is the share (0..1) of all the talhão's cells (interior
	// and border) with a break in the event's window.
	CellFraction float64
	// NCells counts the cells (interior and border) with a break in the
	// window; NInterior the interior ones among them.
	NCells, NInterior int
	// MagnitudeSigma is the median over member interior cells of their
	// break magnitude, in σ of each cell's own history.
	MagnitudeSigma float64
	// Test names the test of the candidate the cells agreed with
	// (TestSoil, TestStrawShare, TestMedianNDTI, TestNDTIStep).
	Test string
	// Evidence read on the talhão's median NDTI around the event, the same
	// for every test (addEvidence): NDTIDrop is the level before minus
	// the level after (NDTI units, up to 8 dates bare of green on each
	// side within 60 days, each sensor's offset removed), NDTINoise its
	// standard error from the date-to-date scatter of the same series
	// (NaN when a side has no such date); DatesBefore and DatesAfter count
	// the dates of the two levels and Sensors names their collections
	// (sorted; nil when the readings carry none).
	NDTIDrop, NDTINoise     float64
	DatesBefore, DatesAfter int
	Sensors                 []string
	// Operation is the SINM tipoOperacao guess. It is always "": ploughing,
	// harrowing, chiselling and subsoiling all bury straw and expose soil,
	// and NDVI/NDTI cannot tell them apart, so no guess is justified.
	Operation string
}

// cellSeries is one cell's clear observations, unmixed, with its σ.
type cellSeries struct {
	cs     []clearObs
	sg     sigmas
	border bool
}

// Detect finds the talhão's soil-revolving events. Candidate breaks come
// from the median series of the interior cells (per date, when at least
// half of them are clear; pooling cuts the noise of a single cell) and from
// each cell's own DetectCell breaks. A candidate dated D becomes an event
// when at least MinCellFraction of the interior cells (at least one) agree:
// a cell agrees when, with its first clear observation at or after D (or
// one of the next two, within WindowDays) as the first post-break one, it
// passes the same NDTI validation and its own soil-fraction shift exceeds
// CellK standard errors of its own σ. Border cells are counted in
// CellFraction and NCells but never make an event on their own (IN 2.3
// III); a talhão without interior cells has no events. Candidates within
// 60 days of an accepted event merge into it (one bare spell, one event). Events are in date order;
// nil when none or the parameters are invalid.
func Detect(cells []Cell, p Params) []Event {
	if p.Validate() != nil {
		return nil
	}
	p.tune = p.tune.withDefaults()
	u, _ := newUnmixer(p)
	nInt := 0
	series := make([]cellSeries, len(cells))
	var interior [][]Obs
	for i, c := range cells {
		cs := prepare(c.Obs, p, u)
		series[i] = cellSeries{cs: cs, sg: newSigmas(cs, p), border: c.Border}
		if !c.Border {
			nInt++
			interior = append(interior, c.Obs)
		}
	}
	if nInt == 0 {
		return nil
	}
	need := int(math.Ceil(p.MinCellFraction*float64(nInt) - 1e-9))
	if need < 1 {
		need = 1
	}
	window := time.Duration(p.WindowDays) * 24 * time.Hour

	// Candidates: pooled breaks first (better dated), then cell breaks.
	var cands []Break
	cands = append(cands, DetectCell(pool(interior), p)...)
	var cellCands []Break
	for i, sr := range series {
		if !sr.border {
			cellCands = append(cellCands, scanTillage(series[i].cs, p, series[i].sg)...)
		}
	}
	sort.SliceStable(cellCands, func(i, j int) bool { return cellCands[i].Date.Before(cellCands[j].Date) })
	cands = append(cands, cellCands...)

	var out []Event
	for _, c := range cands {
		dup := false
		for _, e := range out {
			if absDur(c.Date.Sub(e.Date)) <= mergeDays*24*time.Hour {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		ev, ok := agree(series, c, p, window, need, len(cells))
		if ok {
			out = append(out, ev)
		}
	}
	pl := pooled(interior)
	if !mdOff {
		out = addMedianDrops(out, p.thirdOnShort(pl, medianDropBreaks(pl, p)), series, p, window, len(cells))
	}
	if !stepOff {
		out = addMedianDrops(out, stepBreaks(stepPooled(interior, pl), p), series, p, window, len(cells))
	}
	if !lowResOff {
		out = addLowResidue(out, pl, series, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Date.Before(out[j].Date) })
	addEvidence(out, pl, p)
	return out
}

// addMedianDrops adds the breaks of the median-NDTI drop test not within
// mergeDays of an event already found, with the interior cells that agree
// counted (the pooled median already speaks for half of them).
func addMedianDrops(out []Event, drops []Break, series []cellSeries, p Params, window time.Duration, nCells int) []Event {
	n := len(out)
	for _, c := range drops {
		dup := false
		for _, e := range out[:n] {
			if absDur(c.Date.Sub(e.Date)) <= mergeDays*24*time.Hour {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		ev, _ := agree(series, c, p, window, 0, nCells)
		ev.MagnitudeSigma, ev.Test = c.MagnitudeSigma, c.Test
		out = append(out, ev)
	}
	return out
}

// mergeDays is how close (days) a candidate may be to an accepted event and
// still be the same operation: one bare spell before a sowing is one event
// (a ploughing followed by a harrowing weeks later included).
const mergeDays = persistDays

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// agree counts the cells whose own series confirm the candidate break c.
func agree(series []cellSeries, c Break, p Params, window time.Duration, need, nCells int) (Event, bool) {
	pc := p
	pc.K = p.CellK
	var nc, ni int
	var mags []float64
	buf := make([]float64, 0, p.PreObs+p.PersistObs+p.ConfirmObs+1)
	post := make([]float64, 0, p.PersistObs+p.ConfirmObs+1)
	for _, sr := range series {
		cs := sr.cs
		j := sort.Search(len(cs), func(i int) bool { return !cs[i].date.Before(c.Date) })
		for k := j; k < len(cs) && k <= j+2 && cs[k].date.Sub(c.Date) <= window; k++ {
			if k < 1 {
				continue
			}
			if b, ok := breakAt(cs, k, pc, sr.sg, buf, post); ok {
				nc++
				if !sr.border {
					ni++
					mags = append(mags, b.MagnitudeSigma)
				}
				break
			}
		}
	}
	if ni < need {
		return Event{}, false
	}
	return Event{
		Date: c.Date, Before: c.Before, After: c.After, Test: c.Test,
		CellFraction:   float64(nc) / float64(nCells),
		NCells:         nc,
		NInterior:      ni,
		MagnitudeSigma: num.Median(mags),
	}, true
}

// pool returns the per-date median of NDVI and NDTI over the cells, for
// dates on which at least half of them have a clear value (NaN otherwise).
func pool(cells [][]Obs) []Obs {
	ps := pooled(cells)
	out := make([]Obs, len(ps))
	for i, o := range ps {
		out[i] = o.Obs
	}
	return out
}

// pooledObs is one date of the pooled interior series: the medians of NDVI
// and NDTI, and of SWIR1+SWIR2 and Red+NIR over the cells that carry
// reflectances (0 when none does), the sensor of the date, and the share
// of the interior cells clear on it.
type pooledObs struct {
	Obs
	swir, vnir float64
	sensor     string
	share      float64
}

// pooled returns the per-date medians of pool, with the median SWIR1+SWIR2.
func pooled(cells [][]Obs) []pooledObs { return pooledAt(cells, pooledShare) }

// pooledAt is pooled reading the dates on which at least share of the
// cells are clear (at least one).
func pooledAt(cells [][]Obs, share float64) []pooledObs {
	type acc struct {
		v, t, s, n []float64
		sensor     string
	}
	byDate := map[time.Time]*acc{}
	var dates []time.Time
	for _, obs := range cells {
		for _, o := range obs {
			a := byDate[o.Date]
			if a == nil {
				a = &acc{}
				byDate[o.Date] = a
				dates = append(dates, o.Date)
			}
			if !math.IsNaN(o.NDVI) && !math.IsNaN(o.NDTI) {
				a.v = append(a.v, o.NDVI)
				a.t = append(a.t, o.NDTI)
				if a.sensor == "" {
					a.sensor = o.Sensor
				}
				if s := o.SWIR1 + o.SWIR2; s > 0 {
					a.s = append(a.s, s)
					if v := o.Red + o.NIR; v > 0 {
						a.n = append(a.n, v)
					}
				}
			}
		}
	}
	sort.Slice(dates, func(i, j int) bool { return dates[i].Before(dates[j]) })
	min := max(1, int(math.Ceil(share*float64(len(cells))-1e-9)))
	out := make([]pooledObs, len(dates))
	for i, d := range dates {
		a := byDate[d]
		out[i] = pooledObs{Obs: Obs{Date: d, NDVI: math.NaN(), NDTI: math.NaN()}}
		if len(a.v) >= min && len(a.v) > 0 {
			out[i].NDVI, out[i].NDTI, out[i].sensor = num.Median(a.v), num.Median(a.t), a.sensor
			out[i].share = float64(len(a.v)) / float64(len(cells))
			if len(a.s) >= min && len(a.s) > 0 {
				out[i].swir = num.Median(a.s)
			}
			if len(a.n) >= min && len(a.n) > 0 {
				out[i].vnir = num.Median(a.n)
			}
		}
	}
	return out
}
