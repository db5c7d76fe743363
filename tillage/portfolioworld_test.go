package tillage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// The portfolio world of issue 30: the short-series world's fields
// (shortworld_test.go: its spectra, stover, weather, snow and tillage law)
// read as a real table is — several talhões of one region sharing every
// acquisition, for four crop years of 1 November → planting, each field
// conventional (tilled every season) or no-till throughout. What the
// short world draws per talhão, the portfolio shares where the real
// archive does:
//   - the passes (Landsat 7 every 16 days with SLC-off stripes, Landsat 8
//     every 16 days, Sentinel-2 every 5 days from 2017), whole-scene
//     clouds, flagged and unflagged snow episodes, the region's rain and
//     thaw (each field wets by 0.6–1 of it), thin haze on a date;
//   - each sensor's band gains and offsets (Roy et al. 2016; Claverie et
//     al. 2018: one sensor, one calibration), plus 0.5 % of a field's own;
//   - per-date band gains of the atmosphere and BRDF, 1 ± N(0, ds) with
//     ds drawn per portfolio in 0.005–0.03 (the short world's range), and
//     a field's own part 1 ± N(0, dsOwn), dsOwn in 0.002–0.01 (a field's
//     moisture, its own view geometry);
//   - a field's share of partial clouds and cloud edges is its own.
// Landsat 7 and 8 carry their platform in the sensor name (the pipeline
// reads it from the item id); with mergeLandsat both read as one
// collection, as before the pipeline told them apart.

// portfolioWorld draws portfolios. Nothing in it was fitted to a target:
// its plain NDTI-drop rule at its best threshold (optimistic) scores
// 0.773 / 0.730 per talhão over four seasons on the tuning seeds, within
// the 0.72–0.85 the real fields of issue 30 give it.
type portfolioWorld struct {
	fields       int     // talhões per portfolio
	conventional float64 // share of conventional talhões
	seasons      int
	mergeLandsat bool
	// spring, when > 0, is the chance that a conventional field's season
	// has a spring pass after an autumn one (0: the short world's 0.75).
	spring float64
}

// portfolioField is one talhão of a portfolio: its cells over every
// season, the windows read, its tillages and its class.
type portfolioField struct {
	cells        []Cell
	windows      [][2]time.Time
	tillage      []time.Time
	conventional bool
}

// held returns the tillages inside a window with at least 20 days of it
// after (shortTalhao.held, per window).
func (f portfolioField) held() []time.Time {
	var out []time.Time
	for _, t := range f.tillage {
		for _, w := range f.windows {
			if t.After(w[0]) && !t.After(w[1].AddDate(0, 0, -20)) {
				out = append(out, t)
			}
		}
	}
	return out
}

// season returns the field's cells restricted to window k.
func (f portfolioField) season(k int) []Cell {
	w := f.windows[k]
	out := make([]Cell, len(f.cells))
	for i, c := range f.cells {
		out[i] = Cell{ID: c.ID, Border: c.Border}
		for _, o := range c.Obs {
			if !o.Date.Before(w[0]) && !o.Date.After(w[1]) {
				out[i].Obs = append(out[i].Obs, o)
			}
		}
	}
	return out
}

// pfScene is what the talhões of a portfolio share in one season.
type pfScene struct {
	year              int
	start, end, plant time.Time
	harvest           time.Time // the region's earliest harvest (day 0)
	wet, snow         []float64
	passes            []pfPass
}

type pfPass struct {
	date     time.Time
	sensor   int
	cloudy   bool
	haze     float64
	dg       refl
	slcPhase float64
}

// drawPortfolio draws one portfolio: its talhões over w.seasons seasons.
func (w portfolioWorld) drawPortfolio(rng *rand.Rand) []portfolioField {
	y0 := 2017 + rng.IntN(3)
	var gain, offs [3]refl
	for s := range gain {
		for b := range 4 {
			gain[s][b] = 1 + rng.NormFloat64()*0.02
			offs[s][b] = rng.NormFloat64() * 0.004
		}
	}
	gain[swSensorL7][2] *= 0.97 + 0.06*rng.Float64()
	names := [3]string{"landsat-c2-l2/LE07", "landsat-c2-l2/LC08", "sentinel-2-l2a"}
	if w.mergeLandsat {
		names[0], names[1] = "landsat-c2-l2", "landsat-c2-l2"
	}
	fields := make([]portfolioField, w.fields)
	type fixed struct {
		soil    refl
		ptSoil  []refl
		ptCover []float64
		slcOff  float64
		dsOwn   float64
		gainOwn refl
	}
	fx := make([]fixed, w.fields)
	for f := range fields {
		fields[f].conventional = rng.Float64() < w.conventional
		n := 40 + rng.IntN(61)
		fields[f].cells = make([]Cell, n)
		for p := range n {
			fields[f].cells[p].ID = fmt.Sprint(p)
		}
		fx[f].soil = jit(rng, swSoils[rng.IntN(len(swSoils))], 0.06)
		fx[f].ptSoil, fx[f].ptCover = make([]refl, n), make([]float64, n)
		for p := range n {
			fx[f].ptCover[p] = rng.NormFloat64() * 0.07
			fx[f].ptSoil[p] = jit(rng, fx[f].soil, 0.04)
		}
		fx[f].slcOff = rng.Float64() * 100
		fx[f].dsOwn = uni(rng, 0.002, 0.01)
		for b := range 4 {
			fx[f].gainOwn[b] = 1 + rng.NormFloat64()*0.005
		}
	}
	slcPeriod := uni(rng, 17, 35)
	slcGap := uni(rng, 0, 0.4) * slcPeriod
	for s := range w.seasons {
		sc := w.drawScene(rng, y0+s, slcPeriod)
		for f := range fields {
			pf := &fields[f]
			fs := w.drawSurface(rng, sc, pf.conventional)
			pf.windows = append(pf.windows, [2]time.Time{sc.start, sc.end})
			pf.tillage = append(pf.tillage, fs.tillDates()...)
			wetK := uni(rng, 0.6, 1)
			for _, ps := range sc.passes {
				w.read(rng, pf, fx[f].ptSoil, fx[f].ptCover, fs, sc, ps, wetK, names, gain, offs, fx[f].gainOwn, fx[f].dsOwn,
					func(p int) bool {
						return ps.sensor == swSensorL7 && math.Mod(float64(p)+fx[f].slcOff+ps.slcPhase, slcPeriod) < slcGap
					})
			}
		}
	}
	for f := range fields {
		for p := range fields[f].cells {
			fields[f].cells[p].Obs = sortObs(fields[f].cells[p].Obs)
		}
	}
	return fields
}

// drawScene draws the season's shared passes, clouds, snow and rain.
func (w portfolioWorld) drawScene(rng *rand.Rand, year int, slcPeriod float64) pfScene {
	sc := pfScene{year: year}
	sc.harvest = time.Date(year, 10, 1, 0, 0, 0, 0, time.UTC)
	sc.start = time.Date(year, 11, 1, 0, 0, 0, 0, time.UTC)
	sc.plant = time.Date(year+1, 4, 20, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(26))
	sc.end = sc.plant.AddDate(0, 0, rng.IntN(11))
	days := int(sc.end.Sub(sc.harvest).Hours()/24) + 1
	sc.wet, sc.snow = make([]float64, days), make([]float64, days)
	wv := 0.0
	for i := range days {
		d := sc.harvest.AddDate(0, 0, i)
		wv *= math.Exp(-1 / dryDaysUS[d.Month()-1])
		if rng.Float64() < rainByMonthUS[d.Month()-1] {
			wv = math.Max(wv, uni(rng, 0.4, 1))
		}
		sc.wet[i] = wv
	}
	for n := poisson(rng, 2.5); n > 0; n-- {
		s0 := int(time.Date(year, 12, 1, 0, 0, 0, 0, time.UTC).Sub(sc.harvest).Hours()/24) + rng.IntN(105)
		f := uni(rng, 0.5, 1)
		for i := s0; i < s0+3+rng.IntN(23) && i < days; i++ {
			sc.snow[i] = f
		}
	}
	ds := uni(rng, 0.005, 0.03)
	add := func(sensor, every int) {
		for d := sc.start.AddDate(0, 0, rng.IntN(every)); !d.After(sc.end); d = d.AddDate(0, 0, every) {
			i := int(d.Sub(sc.harvest).Hours() / 24)
			ps := pfPass{date: d, sensor: sensor, slcPhase: rng.Float64() * slcPeriod}
			ps.cloudy = rng.Float64() < cloudByMonthUS[d.Month()-1] || (sc.wet[i] > 0.9 && rng.Float64() < 0.7)
			if sc.snow[i] > 0 && rng.Float64() < 0.85 {
				ps.cloudy = true
			}
			if rng.Float64() < 0.07 {
				ps.haze = uni(rng, 0.3, 1.5)
			}
			for b := range ps.dg {
				ps.dg[b] = 1 + rng.NormFloat64()*ds
			}
			sc.passes = append(sc.passes, ps)
		}
	}
	add(swSensorL7, 16)
	add(swSensorL8, 16)
	if year >= 2017 {
		add(swSensorS2, 5)
	}
	return sc
}

// pfSurface is one field's surface in one season.
type pfSurface struct {
	tills []struct {
		date time.Time
		keep float64
	}
	cover0, decay        float64
	weather, weatherDays float64
	stover, weathered    refl
	weedMax              float64
	rye                  bool
	ryeMax               float64
	ryeEnd               time.Time
	kStraw, kSoil        [3]float64
	harvest              time.Time
	plant                time.Time
}

func (s pfSurface) tillDates() []time.Time {
	var out []time.Time
	for _, t := range s.tills {
		if t.date.After(s.harvest) {
			out = append(out, t.date)
		}
	}
	return out
}

// drawSurface draws a field's season (the short world's law).
func (w portfolioWorld) drawSurface(rng *rand.Rand, sc pfScene, conventional bool) pfSurface {
	var s pfSurface
	s.harvest = sc.harvest.AddDate(0, 0, rng.IntN(30))
	s.plant = sc.plant.AddDate(0, 0, rng.IntN(8))
	s.cover0 = uni(rng, 0.55, 0.95)
	spring := w.spring
	if spring == 0 {
		spring = 0.75
	}
	if conventional {
		if rng.Float64() < 0.75 {
			keep := uni(rng, 0.25, 0.6)
			if rng.Float64() < 0.3 {
				keep = uni(rng, 0.05, 0.2)
			}
			s.tills = append(s.tills, struct {
				date time.Time
				keep float64
			}{time.Date(sc.year, 10, 10, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(67)), keep})
		}
		if len(s.tills) == 0 || rng.Float64() < spring {
			s.tills = append(s.tills, struct {
				date time.Time
				keep float64
			}{s.plant.AddDate(0, 0, -1-rng.IntN(40)), uni(rng, 0.3, 0.7)})
		}
	}
	s.decay = uni(rng, 0.0004, 0.002)
	s.weather, s.weatherDays = uni(rng, 0.2, 0.6), uni(rng, 60, 200)
	s.stover = jit(rng, swStover, 0.06)
	s.weathered = jit(rng, swWeathered, 0.06)
	s.weedMax = uni(rng, 0, 0.15)
	s.rye = !conventional && rng.Float64() < 0.2
	s.ryeMax, s.ryeEnd = uni(rng, 0.3, 0.7), s.plant.AddDate(0, 0, -7-rng.IntN(20))
	k1 := uni(rng, 0.3, 0.55)
	s.kStraw = [3]float64{uni(rng, 0.15, 0.3), k1, k1 * uni(rng, 0.55, 0.9)}
	ks := uni(rng, 0.3, 0.55)
	s.kSoil = [3]float64{s.kStraw[0], ks, ks * uni(rng, 0.9, 1.15)}
	return s
}

// ground returns the field's cover and green on day d.
func (s pfSurface) ground(d time.Time) (float64, float64) {
	c := s.cover0 * math.Exp(-s.decay*d.Sub(s.harvest).Hours()/24)
	for _, t := range s.tills {
		if !d.Before(t.date) {
			c *= t.keep
		}
	}
	g := 0.0
	apr := time.Date(s.plant.Year(), 4, 1, 0, 0, 0, 0, time.UTC)
	if d.After(apr) {
		g = s.weedMax * math.Min(1, d.Sub(apr).Hours()/24/40)
		for _, t := range s.tills {
			if !d.Before(t.date) && d.Sub(t.date) < 20*24*time.Hour {
				g = 0
			}
		}
	}
	mar := time.Date(s.plant.Year(), 3, 1, 0, 0, 0, 0, time.UTC)
	if s.rye && d.After(mar) {
		r := s.ryeMax * math.Min(1, d.Sub(mar).Hours()/24/50)
		if d.After(s.ryeEnd) {
			r *= math.Exp(-d.Sub(s.ryeEnd).Hours() / 24 / 8)
		}
		g = math.Max(g, r)
	}
	return math.Max(0, math.Min(1, c)), g
}

// read appends one pass's readings of a field.
func (w portfolioWorld) read(rng *rand.Rand, pf *portfolioField, ptSoil []refl, ptCover []float64, fs pfSurface, sc pfScene, ps pfPass,
	wetK float64, names [3]string, gain, offs [3]refl, gainOwn refl, dsOwn float64, slcGap func(int) bool) {
	d := ps.date
	nPts := len(pf.cells)
	i := int(d.Sub(sc.harvest).Hours() / 24)
	wet, snow := sc.wet[i]*wetK, sc.snow[i]
	partLo, partHi := 0, 0
	if !ps.cloudy && rng.Float64() < 0.2 {
		partLo = rng.IntN(nPts)
		partHi = partLo + int(uni(rng, 0.1, 0.6)*float64(nPts))
	}
	edge, edgeLo, edgeHi := 0.0, 0, 0
	if rng.Float64() < 0.04 {
		edge, edgeLo = uni(rng, 0.05, 0.3), rng.IntN(nPts)
		edgeHi = edgeLo + int(uni(rng, 0.3, 1)*float64(nPts))
	}
	var dg refl
	for b := range dg {
		dg[b] = ps.dg[b] * (1 + rng.NormFloat64()*dsOwn)
	}
	c, g := fs.ground(d)
	haze := ps.haze * uni(rng, 0.7, 1.3)
	for p := range nPts {
		o := Obs{Date: d, NDVI: math.NaN(), NDTI: math.NaN(), Sensor: names[ps.sensor]}
		if ps.cloudy || slcGap(p) || (p >= partLo && p < partHi) || d.After(fs.plant.AddDate(0, 0, 10)) {
			pf.cells[p].Obs = append(pf.cells[p].Obs, o)
			continue
		}
		cp := math.Max(0, math.Min(1, c+ptCover[p]*c))
		a := 1 - math.Exp(-d.Sub(fs.harvest).Hours()/24/fs.weatherDays)
		res := wetten4(rmix(fs.stover, fs.weathered, fs.weather*a), fs.kStraw, wet)
		sl := wetten4(ptSoil[p], fs.kSoil, wet)
		r := rmix(rmix(sl, res, cp), swGreen, g)
		if snow > 0 {
			r = rmix(r, swSnow, math.Min(1, snow*uni(rng, 0.5, 1.5)))
		}
		e := edge
		if !(p >= edgeLo && p < edgeHi) {
			e = 0
		}
		r = swSense(rng, r, haze, e, offs[ps.sensor], gain[ps.sensor], gainOwn, dg)
		o.NDVI, o.NDTI = r.ndvi(), r.ndti()
		o.Red, o.NIR, o.SWIR1, o.SWIR2 = r[0], r[1], r[2], r[3]
		pf.cells[p].Obs = append(pf.cells[p].Obs, o)
	}
}
