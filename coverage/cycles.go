package coverage

import (
	"math"
	"sort"
	"time"

	"github.com/manejo/manejo/zarc"
)

// Obs is one dated reading of a cell (or of the talhão median): NDVI and
// NDTI, unitless. NaN marks a value the cloud mask removed or that is
// missing.
type Obs struct {
	Date       time.Time
	NDVI, NDTI float64
	// Red, NIR, SWIR1 and SWIR2 are the reading's surface reflectances
	// (0..1), optional: NaN or 0 when absent (MODIS NDVI products, series
	// that did not keep them). When every band of enough readings is
	// present, Assess fits the talhão's own soil spectrum from them (see
	// Params.NoSoilFit); NDVI and NDTI are still what is unmixed.
	Red, NIR, SWIR1, SWIR2 float64
}

// Kinds of crop cycle, written to SINM interpretacoesCultura.tipoCultivo.
const (
	KindFirst  = "Cultivo de 1ª safra" // the main (summer) crop whose sowing C is read before
	KindSecond = "Cultivo de 2ª safra" // the first cycle after the main crop (safrinha, cover crop)
	KindThird  = "Cultivo de 3ª safra" // any later cycle in the same agricultural year
	KindBefore = "Planta de cobertura" // a cycle before the main crop in the agricultural year (winter or cover crop)
	KindOther  = "Cultivo"             // a cycle of an agricultural year whose main crop was not found
)

// Cycle is one green-up, peak and senescence of the talhão's NDVI.
type Cycle struct {
	Start time.Time // green-up: NDVI crosses base + GreenUp × amplitude on the way up
	Peak  time.Time // maximum of the smoothed NDVI
	End   time.Time // senescence: NDVI crosses base + GreenUp × amplitude on the way down
	// PeakNDVI is the smoothed NDVI at Peak; Amplitude is PeakNDVI minus the
	// higher of the two bases around the peak (NDVI units).
	PeakNDVI, Amplitude float64
	Kind                string // KindFirst, KindSecond, ...
	Main                bool   // the main crop of its agricultural year
	// Sowing is the cycle's sowing day: for a 2ª or 3ª safra the estimate
	// of cycleSowing; for the main crop the season's sowing (declared or
	// detected; set by Assess, zero from Cycles); zero for other cycles.
	Sowing time.Time
	// StartCensored (EndCensored) is true when the series begins (ends)
	// inside the green-up (senescence): Start (End) is then only a bound.
	StartCensored, EndCensored bool

	l, p, r    int     // indices of the left base, peak and right base in the daily series
	sos, eos   float64 // fractional indices of Start and End
	baseL, amL float64 // left base NDVI and rise amplitude
}

// censorBase is the smoothed NDVI above which a base at the very start or
// end of the series is taken as the middle of a cycle rather than bare soil
// or straw (both read NDVI 0.1–0.35).
const censorBase = 0.5

// troughRise is the NDVI rise that ends the walk from a peak to its base.
const troughRise = 0.1

// Cycles returns the crop cycles of an agricultural year found in a talhão
// NDVI series (the median over its cells; NaN values are skipped): every
// peak of the robustly smoothed series whose NDVI reaches MinPeak and
// which stands MinAmplitude above the lowest points separating it from
// higher peaks on both sides, whose Peak lies in the season. Observations
// before and after the season help (keep some months on each side).
// Cycles are labelled relative to the main crop of crop (see DetectSowing).
// It returns nil when fewer than 4 days have a clear NDVI.
func Cycles(obs []Obs, season Season, crop zarc.Crop, p Params) []Cycle {
	p = p.withDefaults()
	s := smoothNDVI(obs, p.Lambda, p.RobustIter)
	if s == nil {
		return nil
	}
	cs, _ := seasonCycles(s, season, crop, p)
	return cs
}

// findCycles finds every cycle of the smoothed series: its peaks
// (cyclePeaks), the trough on each side of each peak (cycleBases), and the
// green-up and senescence crossings between them (cycleAt).
func findCycles(s *daily, p Params) []Cycle {
	z := s.z
	if len(z) < 3 {
		return nil
	}
	peaks := cyclePeaks(z, p)
	if len(peaks) == 0 {
		return nil
	}
	lefts, rights := cycleBases(z, peaks)
	out := make([]Cycle, 0, len(peaks))
	for k, pi := range peaks {
		if c, ok := cycleAt(s, lefts[k], pi, rights[k], p); ok {
			out = append(out, c)
		}
	}
	return out
}

// cyclePeaks returns the indices of the local maxima of z that reach
// MinPeak and stand MinAmplitude above the lowest points separating them
// from higher values on both sides (on one side at the series' ends).
func cyclePeaks(z []float64, p Params) []int {
	n := len(z)
	var peaks []int
	for i := 0; i < n; i++ {
		up := i == 0 || z[i] > z[i-1]
		down := i == n-1 || z[i] >= z[i+1]
		if !up || !down || z[i] < p.MinPeak {
			continue
		}
		leftMin, rightMin := math.Inf(1), math.Inf(1)
		for j := i - 1; j >= 0 && z[j] <= z[i]; j-- {
			leftMin = math.Min(leftMin, z[j])
		}
		for j := i + 1; j < n && z[j] <= z[i]; j++ {
			rightMin = math.Min(rightMin, z[j])
		}
		var base float64
		switch {
		case i == 0:
			base = rightMin
		case i == n-1:
			base = leftMin
		default:
			base = math.Max(leftMin, rightMin)
		}
		if math.IsInf(base, 1) || z[i]-base < p.MinAmplitude {
			continue
		}
		peaks = append(peaks, i)
	}
	return peaks
}

// cycleBases returns the base on each side of each peak: the nearest
// trough, that is, walking away from the peak, the lowest point reached
// before NDVI rises again by more than troughRise (a previous or next
// hump), the series' end (at most 250 days away), or the neighbouring peak.
func cycleBases(z []float64, peaks []int) (lefts, rights []int) {
	n := len(z)
	walk := func(from, to, step int) int {
		m := from
		for j := from + step; j != to+step; j += step {
			if z[j] < z[m] {
				m = j
			} else if z[j]-z[m] > troughRise {
				break
			}
		}
		return m
	}
	lefts, rights = make([]int, len(peaks)), make([]int, len(peaks))
	for k, pi := range peaks {
		lo, hi := max(0, pi-250), min(n-1, pi+250)
		if k > 0 {
			lo = peaks[k-1]
		}
		if k+1 < len(peaks) {
			hi = peaks[k+1]
		}
		lefts[k], rights[k] = walk(pi, lo, -1), walk(pi, hi, 1)
	}
	return lefts, rights
}

// cycleAt returns the cycle of the peak pi between the bases l and r: its
// start and end where the smoothed NDVI crosses base + GreenUp × amplitude
// (interpolated between days), censored at the series' ends; false when it
// lasts under MinCycleDays and is not censored.
func cycleAt(s *daily, l, pi, r int, p Params) (Cycle, bool) {
	z := s.z
	n := len(z)
	f := float64(p.GreenUp)
	c := Cycle{l: l, p: pi, r: r, PeakNDVI: z[pi], baseL: z[l], amL: z[pi] - z[l]}
	c.Amplitude = z[pi] - math.Max(z[l], z[r])
	thr := z[l] + f*(z[pi]-z[l])
	c.sos = float64(l)
	for j := l + 1; j <= pi; j++ {
		if z[j] >= thr {
			c.sos = float64(j-1) + (thr-z[j-1])/(z[j]-z[j-1])
			break
		}
	}
	thr = z[r] + f*(z[pi]-z[r])
	c.eos = float64(r)
	for j := r - 1; j >= pi; j-- {
		if z[j] >= thr {
			c.eos = float64(j) + (z[j]-thr)/(z[j]-z[j+1])
			break
		}
	}
	c.StartCensored = (l == 0 && z[l] > censorBase) || pi == 0
	c.EndCensored = (r == n-1 && z[r] > censorBase) || pi == n-1
	if c.eos-c.sos < float64(p.MinCycleDays) && !c.StartCensored && !c.EndCensored {
		return Cycle{}, false
	}
	c.Start = s.date(int(math.Round(c.sos)))
	c.Peak = s.date(pi)
	c.End = s.date(int(math.Round(c.eos)))
	return c, true
}

// seasonCycles returns the cycles whose peak lies in season, labelled, and
// the index of the main one (−1 when none).
func seasonCycles(s *daily, season Season, crop zarc.Crop, p Params) ([]Cycle, int) {
	var cs []Cycle
	for _, c := range findCycles(s, p) {
		if season.Contains(c.Peak) {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].p < cs[j].p })
	main := -1
	ws, we := p.window(crop, season)
	slack := time.Duration(p.WindowSlackDays) * 24 * time.Hour
	for i, c := range cs {
		if c.StartCensored {
			continue
		}
		sow := sowingOf(s, c, p.lag(crop))
		if !sow.Before(ws.Add(-slack)) && !sow.After(we.Add(slack)) && p.fitsCycle(crop, c) {
			main = i
			break
		}
	}
	label(cs, main)
	setCycleSowings(s, cs, time.Time{}, p)
	return cs, main
}

// label sets Kind and Main of cs relative to the main cycle cs[main]
// (main < 0: none).
func label(cs []Cycle, main int) {
	for i := range cs {
		cs[i].Main = false
		switch {
		case main < 0:
			cs[i].Kind = KindOther
		case i < main:
			cs[i].Kind = KindBefore
		case i == main:
			cs[i].Kind, cs[i].Main = KindFirst, true
		case i == main+1:
			cs[i].Kind = KindSecond
		default:
			cs[i].Kind = KindThird
		}
	}
}

// mainFor returns the index of the cycle a known sowing day starts: the one
// whose green-up comes closest to sowing + lag, at most 45 days away; −1 when
// none.
func mainFor(cs []Cycle, sow time.Time, lag float64) int {
	best, bestGap := -1, 45.0
	want := sow.Add(time.Duration(lag*24) * time.Hour)
	for i, c := range cs {
		if gap := math.Abs(c.Start.Sub(want).Hours() / 24); gap <= bestGap {
			best, bestGap = i, gap
		}
	}
	return best
}

// sowingOf is the unconstrained sowing day of cycle c: its green-up minus
// the lag.
func sowingOf(s *daily, c Cycle, lag float64) time.Time {
	return s.date(int(math.Round(c.sos - lag)))
}
