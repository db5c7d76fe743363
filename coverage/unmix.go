package coverage

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/manejo/manejo/spectral"
	"github.com/manejo/manejo/zarc"
)

// spectrum returns o's reflectances.
func (o Obs) spectrum() spectral.Spectrum {
	return spectral.Spectrum{Red: o.Red, NIR: o.NIR, SWIR1: o.SWIR1, SWIR2: o.SWIR2}
}

// maxSoilFitObs bounds the readings the soil fit reads (an even stride
// through them): 4 000 fix the soil's NDTI to ≈ 0.001 and keep the fit
// under ≈ 5 ms on large talhões.
const maxSoilFitObs = 4000

// fitSoil returns the talhão's own soil endmember fitted from the
// reflectances of its cells' readings with NDVI below MaxNDVI (all dates:
// the soil is the talhão's, the fractions each reading's; at most
// maxSoilFitObs of them), and false when fewer than MinSoilFitObs readings
// carry all four bands. With strict, it is spectral.FieldSoil, the one
// talhão soil calibration tillage reads with too (a fit on the edge of its
// grid is refused).
func fitSoil(cells [][]Obs, p Params, strict bool) (spectral.SoilFit, bool) {
	use := func(o Obs) bool { return finite(o.NDVI) && o.NDVI < p.MaxNDVI && o.spectrum().Valid() }
	n := 0
	for _, cell := range cells {
		for _, o := range cell {
			if use(o) {
				n++
			}
		}
	}
	stride := (n + maxSoilFitObs - 1) / maxSoilFitObs
	rs := make([]spectral.Spectrum, 0, min(n, maxSoilFitObs))
	i := 0
	for _, cell := range cells {
		for _, o := range cell {
			if use(o) {
				if i%stride == 0 {
					rs = append(rs, o.spectrum())
				}
				i++
			}
		}
	}
	if strict {
		return spectral.FieldSoil(rs)
	}
	return spectral.FitSoil(spectral.GreenSpectrum, spectral.StrawSpectrum, spectral.SoilSpectrum, rs, MinSoilFitObs)
}

// calibrate returns p with defaults and the talhão's own endmembers: the
// soil fitted from its readings (fitSoil) unless p sets Soil or BareNDTI
// or NoSoilFit, and, when p leaves every endmember to the readings
// (Params.calibrated), the calibration the seasons' straw is then fitted
// with (nil otherwise: the straw is p's).
func calibrate(cells [][]Obs, p Params) (Params, *calibration) {
	fit := p.Estimator.unmixes() && !p.NoSoilFit && p.Soil == (spectral.Endmember{}) && p.BareNDTI == 0
	all := p.calibrated()
	p = p.withDefaults()
	p.fewReadings = all && countBelow(cells, p.MaxNDVI) < MinSoilFitObs
	misfit := math.Inf(1)
	fitted := false
	if fit {
		if f, ok := fitSoil(cells, p, all); ok {
			p.Soil = f.Soil.Endmember()
			misfit, fitted = f.Misfit, true
		}
	}
	if !all {
		return p, nil
	}
	p.Soil = withOracleSoil(p.Soil, fitted)
	cal := &calibration{strawSD: priorStrawSD, soilSD: soilNDTISD}
	cal.fitRefused = !fitted
	if misfit <= referenceMisfit {
		cal.strawSD, cal.soilSD = referenceStrawSD, referenceSoilSD
		p.templates = true
	}
	cal.dates, cal.ndvi, cal.ndti, cal.swir = dateMedians(cells)
	p.skip = wetDates(cal.dates, cal.swir)
	return p, cal
}

// newUnmixer returns the unmixer of p's endmembers every reading of
// coverage is split with: spectral.NewDry, so that NDVI variation among dry
// surfaces (residue type and age, soil) is not read as green canopy
// (docs/coverage.md) — unless calibrate found the talhão's readings to be
// mixtures of the reference green and straw and its fitted soil within
// reading noise (Params.templates): then the straw–soil NDVI difference is
// the templates' own and spectral.New reads with it, so that a few percent
// of weeds below the dry line are read as green, not as straw (today's
// world, seven seeds of TestAccuracyFull: C level agreement 2541 → 2545 of
// 2684, 2552 with New everywhere; the harder world unchanged, its readings
// are not the templates'). False when they cannot be unmixed.
func newUnmixer(p Params) (spectral.Unmixer, bool) {
	switch {
	case plainUnmix || p.templates:
		return spectral.New(p.Green, p.Straw, p.Soil)
	case p.fewReadings:
		return spectral.NewDryAt(p.Green, p.Straw, p.Soil, fewReadingsDryNDVI)
	}
	return spectral.NewDry(p.Green, p.Straw, p.Soil)
}

// fewReadingsDryNDVI is the dry line of a talhão with too few readings to
// know its own dry surfaces (Params.fewReadings: a field campaign's one to
// three readings, a short series given to manejo analyse): the top of the
// dry surfaces' NDVI range (dry crop residues up to ≈ 0.35, soils up to ≈
// 0.25: docs/coverage.md, "The dry line"), so that a bright dry residue is
// not read as part green. Such readings' straw is then a monotone function
// of NDTI below NDVI 0.35 (TestFieldCampaignRanking: it ranks measured
// cover as raw NDTI does, where the dry line at 0.222 ranked it worse).
const fewReadingsDryNDVI = 0.35

// countBelow counts the readings of cells with finite NDVI and NDTI and
// NDVI below maxNDVI.
func countBelow(cells [][]Obs, maxNDVI float64) int {
	n := 0
	for _, cell := range cells {
		for _, o := range cell {
			if finite(o.NDVI) && finite(o.NDTI) && o.NDVI < maxNDVI {
				n++
			}
		}
	}
	return n
}

// Fractions is one reading split into green canopy, straw and bare soil
// (0..1 inside the endmember triangle, summing to 1; not clamped).
type Fractions struct{ Green, Straw, Soil float64 }

// UnmixReadings unmixes every reading of a talhão (cells as for Assess)
// with the talhão's calibrated endmembers, the set Assess reads the
// seasons' straw cover with: out[i][j] is cells[i][j]. NaNs for a reading
// without finite NDVI and NDTI, or when the endmembers cannot be unmixed.
func UnmixReadings(cells [][]Obs, p Params) [][]Fractions {
	return unmixReadingsWith(cells, p, newUnmixer)
}

// unmixReadingsWith is UnmixReadings with the unmixer of each agricultural
// year made by newU (newUnmixer in the product; tests compare others).
func unmixReadingsWith(cells [][]Obs, p Params, newU func(Params) (spectral.Unmixer, bool)) [][]Fractions {
	if p.Validate() != nil {
		p = Params{}
	}
	p, cal := calibrate(cells, p)
	// One unmixer per agricultural year (July start): the straw fitted from
	// that year's straw period, as Assess fits it for the season.
	us := map[int]spectral.Unmixer{}
	unmixer := func(d time.Time) (spectral.Unmixer, bool) {
		y := d.Year()
		if d.Month() < time.July {
			y--
		}
		if u, ok := us[y]; ok {
			return u, true
		}
		q := p
		if cal != nil {
			from := time.Date(y, time.July, 1, 0, 0, 0, 0, time.UTC)
			q.Straw = cal.straw(from, from.AddDate(0, 0, strawPeriodDays)).Straw.Endmember()
		}
		u, ok := newU(q)
		if ok {
			us[y] = u
		}
		return u, ok
	}
	out := make([][]Fractions, len(cells))
	for i, cell := range cells {
		out[i] = make([]Fractions, len(cell))
		for j, o := range cell {
			f := Fractions{math.NaN(), math.NaN(), math.NaN()}
			if u, ok := unmixer(zarc.Day(o.Date)); ok && finite(o.NDVI) && finite(o.NDTI) {
				f.Green, f.Straw, f.Soil = u.Fractions(o.NDVI, o.NDTI)
			}
			out[i][j] = f
		}
	}
	return out
}

// unmixCover is EstimatorUnmix of cellCover. Each reading with
// finite NDVI below MaxNDVI dated from AnchorDays before the window to
// AnchorDays after the sowing is unmixed into green, straw and soil
// fractions (newUnmixer: straw and soil on the dry line); readings lying
// more than Outside outside the endmember triangle (water, bad values), or
// whose green fraction by the endmembers' own NDVIs (spectral.New) is below
// −HazeGreen (unflagged haze), are dropped. The cell's cover is the mean
// over the window's days of the straw fraction interpolated linearly in time
// between readings (held flat beyond the first and last), so that a tillage
// or a desiccation inside the window weighs by the days it covers, as in the
// truth the indicator asks for (the window's mean visible straw). The
// readings outside the window only anchor that interpolation: a cell needs
// at least one reading inside it, and nObs counts only those. The first
// clear date on or after the sowing day (up to SowAnchorDays after it)
// anchors the window's end at the sowing day itself (its readings
// averaged, each as the straw share of the ground around the emerging
// canopy, s/(1−g)): soil is not revolved after sowing, so a drop of the
// straw that appears only after sowing happened before it, inside the
// window.
func unmixCover(obs []Obs, from, sow time.Time, p Params) (float64, int, bool) {
	u, ok := newUnmixer(p)
	plain, _ := spectral.New(p.Green, p.Straw, p.Soil)
	if !ok {
		return math.NaN(), 0, false
	}
	lo, hi := from.AddDate(0, 0, -p.AnchorDays), sow.AddDate(0, 0, p.SowAnchorDays)
	type reading struct{ day, straw float64 }
	var rs []reading
	inside := 0
	dry := dryInWindow(obs, from, sow, p)
	var firstAfter time.Time // the first clear date on or after sowing
	for _, o := range obs {
		d := zarc.Day(o.Date)
		if d.Before(lo) || !d.Before(hi) {
			continue
		}
		if !finite(o.NDVI) || !finite(o.NDTI) || o.NDVI >= p.MaxNDVI || (dry && p.skip[d]) {
			continue
		}
		g, s, b := u.Fractions(o.NDVI, o.NDTI)
		if !finite(s) || min(g, s, b) < -p.Outside || max(g, s, b) > 1+p.Outside {
			continue
		}
		if pg, _, _ := plain.Fractions(o.NDVI, o.NDTI); pg < -p.HazeGreen {
			continue
		}
		day := d.Sub(from).Hours() / 24
		if !d.Before(sow) {
			// After sowing the ground is the one the seeder left (no
			// revolving after sowing): the first clear date after it
			// stands for the sowing day, as the straw share of the ground
			// around any emerging canopy. Later dates only add the
			// decay since sowing.
			day = float64(p.WindowDays)
			switch {
			case firstAfter.IsZero() || d.Before(firstAfter):
				firstAfter = d
				rs = slices.DeleteFunc(rs, func(r reading) bool { return r.day >= day })
			case d.After(firstAfter):
				continue
			}
			if g > 0 {
				s /= 1 - g
			}
		}
		rs = append(rs, reading{day, s})
		if !d.Before(from) && d.Before(sow) {
			inside++
		}
	}
	if inside == 0 {
		return math.NaN(), 0, false
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].day < rs[j].day })
	// Readings of the same day (two sensors) are averaged.
	var days, vals []float64
	for i := 0; i < len(rs); {
		j, sum := i, 0.0
		for ; j < len(rs) && rs[j].day == rs[i].day; j++ {
			sum += rs[j].straw
		}
		days = append(days, rs[i].day)
		vals = append(vals, sum/float64(j-i))
		i = j
	}
	v := timeMean(days, vals, p.WindowDays)
	return math.Max(0, math.Min(100, 100*v)), inside, true
}

// dryInWindow reports whether obs has a usable reading in the window
// [from, sow) on a date not in p.skip (then the wet dates are not read).
func dryInWindow(obs []Obs, from, sow time.Time, p Params) bool {
	if len(p.skip) == 0 {
		return false
	}
	for _, o := range obs {
		d := zarc.Day(o.Date)
		if !d.Before(from) && d.Before(sow) && finite(o.NDVI) && finite(o.NDTI) && o.NDVI < p.MaxNDVI && !p.skip[d] {
			return true
		}
	}
	return false
}

// timeMean returns the mean over the days 0..w−1 of the piecewise-linear
// interpolation of vals read on days t (ascending, distinct), held constant
// before the first reading and after the last.
func timeMean(t, vals []float64, w int) float64 {
	n := len(t)
	sum := 0.0
	j := 0
	for k := 0; k < w; k++ {
		x := float64(k)
		for j+1 < n && t[j+1] <= x {
			j++
		}
		switch {
		case x <= t[0]:
			sum += vals[0]
		case j == n-1:
			sum += vals[n-1]
		default:
			a := (x - t[j]) / (t[j+1] - t[j])
			sum += vals[j]*(1-a) + vals[j+1]*a
		}
	}
	return sum / float64(w)
}

// Fractions unmixes one reading into green-canopy, straw and bare-soil
// fractions with p's endmembers (after defaults), as UnmixReadings reads a
// talhão of too few readings to know its dry surfaces: on the dry line at
// NDVI fewReadingsDryNDVI (0.35), so below it the straw is read from NDTI
// alone and only NDVI above it as green. They sum to 1; values outside
// 0..1 mean the reading lies outside the endmembers' span. NaNs for NaN
// input or endmembers that cannot be unmixed.
func (p Params) Fractions(ndvi, ndti float64) (green, straw, soil float64) {
	p = p.withDefaults()
	p.fewReadings = true
	u, ok := newUnmixer(p)
	if !ok || !finite(ndvi) || !finite(ndti) {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return u.Fractions(ndvi, ndti)
}

// Mix is the forward model of Fractions: the NDVI and NDTI of a pixel
// covered by the given fractions (summing to 1) of p's green, straw and soil
// endmembers, mixing their reflectances linearly.
func (p Params) Mix(green, straw, soil float64) (ndvi, ndti float64) {
	p = p.withDefaults()
	var vd, vs, td, ts float64
	for i, e := range [3]spectral.Endmember{p.Green, p.Straw, p.Soil} {
		f := [3]float64{green, straw, soil}[i]
		vs += f * e.VNIR
		vd += f * e.VNIR * e.NDVI
		ts += f * e.SWIR
		td += f * e.SWIR * e.NDTI
	}
	return vd / vs, td / ts
}
