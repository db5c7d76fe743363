package tillage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// The short-series world of issue 30: maize fields of a temperate winter
// (a US Corn Belt season), seen from the first days after the harvest
// (November, or as late as January) to about planting (late April to late
// May) — a window of four to six and a half months — by Landsat 7 (SLC-off
// stripes), Landsat 8 and, from 2017, Sentinel-2. Its parameters are drawn
// here, independently of the detector's: nothing below is read from
// package spectral, pheno or the detector's thresholds.
//
// What it puts on the readings, and where the sizes come from:
//   - cross-sensor differences: per talhão and season, each sensor's band
//     gains 1 ± N(0, 0.02) and offsets N(0, 0.004) of reflectance: the
//     residual Landsat 8 / Sentinel-2 differences after harmonization are
//     of 1–4 % (Claverie et al. 2018, HLS), and Landsat 7 ETM+ and 8 OLI
//     surface reflectances differ by a few hundredths with a band-specific
//     slope of 0.85–0.91 (Roy et al. 2016, OLS between sensors; SWIR1/2
//     slopes 0.89/0.91 with offsets 0.025/0.017). Half the talhões carry
//     Landsat 7 and 8 under one collection name (the sensors cannot be
//     told apart from the table);
//   - offsets shared by every point on one date (atmosphere, BRDF, thin
//     haze): per-date band gains 1 ± N(0, ds), ds drawn per talhão in
//     0.005–0.03;
//   - Landsat 7 SLC-off: stripes of missing readings (about a fifth of the
//     scene; a field's gap width fixed by its place in the scene, the phase
//     new on every date);
//   - clouds by month (whole scene or part of the field), and leaks into
//     "clear" readings: snow (episodes in December–March, 15 % of snowy
//     passes not flagged, patchy), thin cloud or haze (7 % of clear dates),
//     cloud edges over part of the field (4 %);
//   - surface wetness: rain or thaw by month, drying slower in winter
//     (frozen or cold soil), darkening straw and soil, SWIR most, straw
//     losing NDTI as it wets (the direction Quemada & Daughtry 2016
//     report; coefficients drawn here);
//   - maize stover after the harvest, 55–95 % cover, decaying slowly over
//     winter and weathering (its NDTI falls), over a dark Mollisol/Alfisol;
//     weeds and, on a fifth of the fields, a winter cover crop greening in
//     spring and terminated before planting;
//   - tillage on conventional fields: in autumn (10 October–15 December:
//     before or inside the window; chisel 25–60 % or mouldboard 5–20 % of
//     the cover kept) and in spring (75 % of them, 1–40 days before
//     planting, disk or field cultivator keeping 30–70 %), some in spring
//     only.

// swSoilWetsAsStraw is a research stress of the world (-soilwetsasstraw,
// -tags research; false otherwise): the soil's SWIR2 wets 0.55–0.9 of
// its SWIR1 as straw's does, so wet soil loses NDTI too — what the
// low-residue test's wetting response would meet if soils answered
// wetting as straw.
var swSoilWetsAsStraw bool

// shortAblation names the short world's nuisances a research run turns
// off (-shortablate, -tags research, shortablate_research_test.go;
// docs/tillage.md "What each nuisance costs"). Its zero value, the one
// every other run sees, is the world as drawn: every draw, and so every
// figure, unchanged. With on set, each pass's readings come from a stream
// of their own (one number of the talhão's stream per pass), and every
// point is read whether or not it is masked, so that the variants (with
// on set) draw the same talhões, passes, clouds and noise and differ only
// in what is turned off: the nuisances are still drawn, then not applied.
type shortAblation struct {
	on bool
	// sensor: no cross-sensor band gain or offset; dategain: no per-date
	// band gain (ds); slc: no Landsat 7 SLC-off gap; clouds: no cloud
	// mask, whole-scene or partial (every pass clear but snow-flagged
	// ones); snow: no snow (neither flagged passes nor leaks); haze: no
	// haze or thin cloud; edge: no cloud-edge leak; wet: no surface
	// wetness (straw and soil read dry); weather: stover does not
	// weather; green: no weeds nor cover crop; noise: no per-reading
	// noise; hetero: no within-field spread of cover and soil; autumn: an
	// autumn tillage on or before the window's first day is moved inside
	// it (15–45 days after that day).
	sensor, dategain, slc, clouds, snow, haze, edge, wet, weather, green, noise, hetero, autumn bool
}

// swAblate is the research run's ablation; zero otherwise.
var swAblate shortAblation

// autumnInside returns an autumn tillage date on or before start moved
// to 15–45 days after it (swAblate.autumn), deterministically from the
// date so that no draw changes; other dates as they are.
func autumnInside(d, start time.Time) time.Time {
	if !swAblate.autumn || d.After(start) {
		return d
	}
	return start.AddDate(0, 0, 15+d.YearDay()%31)
}

// shortWorld draws talhão-seasons of the short-series world.
type shortWorld struct{}

// shortTalhao is one drawn talhão-season.
type shortTalhao struct {
	cells        []Cell
	start, end   time.Time   // the window read
	tillage      []time.Time // every tillage of the season
	conventional bool
	lat          *shortLatent // the draw's latent truth (research oracles)
}

// shortLatent is what the world drew for a talhão-season and no reading
// shows directly: the research oracles (shortceiling_test.go) read it.
type shortLatent struct {
	harvest                  time.Time
	ground                   func(time.Time) (cover, green float64)
	soil, stover, weathered  refl
	weather, weatherDays, ds float64
	kStraw, kSoil            [3]float64
	wet                      []float64 // by day from the harvest
}

// held returns the tillages a detector can be held to: inside the window,
// with at least 20 days of it after (three or more passes to show the
// drop persists).
func (s shortTalhao) held() []time.Time {
	var out []time.Time
	for _, t := range s.tillage {
		if t.After(s.start) && !t.After(s.end.AddDate(0, 0, -20)) {
			out = append(out, t)
		}
	}
	return out
}

type refl [4]float64 // red, NIR, SWIR1, SWIR2

func (r refl) ndvi() float64 { return (r[1] - r[0]) / (r[1] + r[0]) }
func (r refl) ndti() float64 { return (r[2] - r[3]) / (r[2] + r[3]) }

func rmix(a refl, b refl, f float64) refl {
	var o refl
	for i := range o {
		o[i] = (1-f)*a[i] + f*b[i]
	}
	return o
}

func uni(rng *rand.Rand, a, b float64) float64 { return a + (b-a)*rng.Float64() }

func jit(rng *rand.Rand, r refl, a float64) refl {
	for i := range r {
		r[i] *= uni(rng, 1-a, 1+a)
	}
	return r
}

// Spectra of the world (surface reflectance): maize stover fresh and
// weathered (after Daughtry & Hunt 2008 and Serbin et al. 2009 ranges:
// dry residue NDTI ≈ 0.15–0.22, weathering lowers it), Corn Belt soils
// (dark Mollisols to lighter Alfisols: NDTI ≈ 0–0.08), green weeds or rye,
// snow and cloud.
var (
	swStover    = refl{0.20, 0.29, 0.38, 0.26}
	swWeathered = refl{0.12, 0.17, 0.24, 0.20}
	swSoils     = []refl{{0.08, 0.12, 0.20, 0.18}, {0.11, 0.16, 0.27, 0.25}, {0.15, 0.21, 0.32, 0.28}}
	swGreen     = refl{0.04, 0.40, 0.23, 0.11}
	swSnow      = refl{0.85, 0.80, 0.12, 0.09}
	swCloud     = refl{0.45, 0.47, 0.42, 0.33}
)

// rainByMonthUS is the chance of a wetting rain or thaw on a day, January
// first; dryDaysUS the e-folding days of drying.
var (
	rainByMonthUS  = [12]float64{0.12, 0.15, 0.28, 0.33, 0.33, 0.3, 0.3, 0.3, 0.25, 0.25, 0.22, 0.15}
	dryDaysUS      = [12]float64{9, 8, 5, 3, 2.5, 2, 2, 2, 2.5, 3, 4, 7}
	cloudByMonthUS = [12]float64{0.62, 0.6, 0.58, 0.52, 0.48, 0.4, 0.35, 0.35, 0.4, 0.45, 0.55, 0.62}
)

const (
	swSensorL7 = iota
	swSensorL8
	swSensorS2
)

// draw draws one talhão-season; conventional fields are tilled.
func (shortWorld) draw(rng *rand.Rand, conventional bool) shortTalhao {
	year := 2013 + rng.IntN(10)
	harvest := time.Date(year, 10, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(30))
	starts := []time.Time{time.Date(year, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(year, 11, 15, 0, 0, 0, 0, time.UTC),
		time.Date(year, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(year+1, 1, 1, 0, 0, 0, 0, time.UTC)}
	start := starts[rng.IntN(len(starts))]
	if rng.Float64() < 0.5 {
		start = starts[0]
	}
	planting := time.Date(year+1, 4, 20, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(36))
	end := planting.AddDate(0, 0, rng.IntN(11))
	st := shortTalhao{start: start, end: end, conventional: conventional}

	// Surface: cover of stover through the season.
	cover0 := uni(rng, 0.55, 0.95)
	type till struct {
		date time.Time
		keep float64
	}
	var tills []till
	if conventional {
		if rng.Float64() < 0.75 {
			keep := uni(rng, 0.25, 0.6)
			if rng.Float64() < 0.3 {
				keep = uni(rng, 0.05, 0.2)
			}
			autumn := time.Date(year, 10, 10, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(67))
			tills = append(tills, till{autumnInside(autumn, start), keep})
		}
		if len(tills) == 0 || rng.Float64() < 0.75 {
			tills = append(tills, till{planting.AddDate(0, 0, -1-rng.IntN(40)), uni(rng, 0.3, 0.7)})
		}
	}
	for _, t := range tills {
		if t.date.After(harvest) {
			st.tillage = append(st.tillage, t.date)
		}
	}
	decay := uni(rng, 0.0004, 0.002)
	weather, weatherDays := uni(rng, 0.2, 0.6), uni(rng, 60, 200)
	soil := jit(rng, swSoils[rng.IntN(len(swSoils))], 0.06)
	stover := jit(rng, swStover, 0.06)
	weathered := jit(rng, swWeathered, 0.06)
	weedMax := uni(rng, 0, 0.15)
	rye := !conventional && rng.Float64() < 0.2
	ryeMax, ryeEnd := uni(rng, 0.3, 0.7), planting.AddDate(0, 0, -7-rng.IntN(20))
	kStraw1 := uni(rng, 0.3, 0.55)
	kStraw := [3]float64{uni(rng, 0.15, 0.3), kStraw1, kStraw1 * uni(rng, 0.55, 0.9)}
	kSoil1 := uni(rng, 0.3, 0.55)
	kSoil := [3]float64{kStraw[0], kSoil1, kSoil1 * uni(rng, 0.9, 1.15)}
	if swSoilWetsAsStraw { // research stress (-soilwetsasstraw): the same draw, straw's range
		kSoil[2] = kSoil1 * (0.55 + (0.9-0.55)*(kSoil[2]/kSoil1-0.9)/(1.15-0.9))
	}

	// Daily wetness and snow from the harvest to the end.
	days := int(end.Sub(harvest).Hours()/24) + 1
	wet, snow := make([]float64, days), make([]float64, days)
	w := 0.0
	for i := range days {
		d := harvest.AddDate(0, 0, i)
		w *= math.Exp(-1 / dryDaysUS[d.Month()-1])
		if rng.Float64() < rainByMonthUS[d.Month()-1] {
			w = math.Max(w, uni(rng, 0.4, 1))
		}
		wet[i] = w
	}
	for n := poisson(rng, 2.5); n > 0; n-- {
		s0 := int(time.Date(year, 12, 1, 0, 0, 0, 0, time.UTC).Sub(harvest).Hours()/24) + rng.IntN(105)
		f := uni(rng, 0.5, 1)
		for i := s0; i < s0+3+rng.IntN(23) && i < days; i++ {
			snow[i] = f
		}
	}
	// ground returns the field's surface (cover, green) on day d.
	ground := func(d time.Time) (float64, float64) {
		c := cover0 * math.Exp(-decay*d.Sub(harvest).Hours()/24)
		for _, t := range tills {
			if !d.Before(t.date) {
				c *= t.keep
			}
		}
		g := 0.0
		if d.Month() >= 4 && d.Month() <= 6 {
			g = weedMax * math.Min(1, d.Sub(time.Date(year+1, 4, 1, 0, 0, 0, 0, time.UTC)).Hours()/24/40)
			for _, t := range tills {
				if !d.Before(t.date) && d.Sub(t.date) < 20*24*time.Hour {
					g = 0
				}
			}
		}
		if rye && d.After(time.Date(year+1, 3, 1, 0, 0, 0, 0, time.UTC)) {
			r := ryeMax * math.Min(1, d.Sub(time.Date(year+1, 3, 1, 0, 0, 0, 0, time.UTC)).Hours()/24/50)
			if d.After(ryeEnd) {
				r *= math.Exp(-d.Sub(ryeEnd).Hours() / 24 / 8)
			}
			g = math.Max(g, r)
		}
		return math.Max(0, math.Min(1, c)), g
	}

	// Sensors and their passes.
	type pass struct {
		date   time.Time
		sensor int
	}
	var passes []pass
	add := func(sensor, every int) {
		for d := start.AddDate(0, 0, rng.IntN(every)); !d.After(end); d = d.AddDate(0, 0, every) {
			passes = append(passes, pass{d, sensor})
		}
	}
	add(swSensorL7, 16)
	if year >= 2013 {
		add(swSensorL8, 16)
	}
	if year >= 2017 {
		add(swSensorS2, 5)
	}
	names := [3]string{"landsat-7", "landsat-8", "sentinel-2-l2a"}
	if rng.Float64() < 0.5 {
		names[0], names[1] = "landsat-c2-l2", "landsat-c2-l2"
	}
	var gain, offs [3]refl
	for s := range gain {
		for b := range 4 {
			gain[s][b] = 1 + rng.NormFloat64()*0.02
			offs[s][b] = rng.NormFloat64() * 0.004
		}
	}
	gain[swSensorL7][2] *= 0.97 + 0.06*rng.Float64() // ETM+ vs OLI, SWIR (Roy et al. 2016)
	if swAblate.sensor {
		gain, offs = [3]refl{{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}}, [3]refl{}
	}
	ds := uni(rng, 0.005, 0.03)

	nPts := 40 + rng.IntN(61)
	slcPeriod := uni(rng, 17, 35)
	slcGap := uni(rng, 0, 0.4) * slcPeriod
	ptCover, ptSoil := make([]float64, nPts), make([]refl, nPts)
	for p := range nPts {
		ptCover[p] = rng.NormFloat64() * 0.07
		ptSoil[p] = jit(rng, soil, 0.04)
		if swAblate.hetero {
			ptCover[p], ptSoil[p] = 0, soil
		}
	}
	st.cells = make([]Cell, nPts)
	for p := range st.cells {
		st.cells[p].ID = fmt.Sprint(p)
	}
	for _, ps := range passes {
		d := ps.date
		i := int(d.Sub(harvest).Hours() / 24)
		rr := rng // the readings' stream
		if swAblate.on {
			rr = rand.New(rand.NewPCG(rng.Uint64(), 0x5ab1))
		}
		cloudy := rng.Float64() < cloudByMonthUS[d.Month()-1] || (wet[i] > 0.9 && rng.Float64() < 0.7)
		snowFlag := snow[i] > 0 && rng.Float64() < 0.85 // snow flagged
		partLo, partHi := 0, 0
		if !cloudy && !snowFlag && rng.Float64() < 0.2 {
			partLo = rng.IntN(nPts)
			partHi = partLo + int(uni(rng, 0.1, 0.6)*float64(nPts))
		}
		haze := 0.0
		if rng.Float64() < 0.07 {
			haze = uni(rng, 0.3, 1.5)
		}
		edge, edgeLo, edgeHi := 0.0, 0, 0
		if rng.Float64() < 0.04 {
			edge, edgeLo = uni(rng, 0.05, 0.3), rng.IntN(nPts)
			edgeHi = edgeLo + int(uni(rng, 0.3, 1)*float64(nPts))
		}
		var dg refl
		for b := range dg {
			dg[b] = 1 + rng.NormFloat64()*ds
		}
		slcPhase := rng.Float64() * slcPeriod
		c, g := ground(d)
		nu := swAblate.pass(swNuisance{cloudy, snowFlag, partLo, partHi, haze, edge, slcGap, g, wet[i], snow[i], 1, dg})
		for p := range nPts {
			o := Obs{Date: d, NDVI: math.NaN(), NDTI: math.NaN(), Sensor: names[ps.sensor]}
			gap := ps.sensor == swSensorL7 && math.Mod(float64(p)+slcPhase, slcPeriod) < nu.slcGap
			masked := nu.cloud || nu.snowFlag || gap || (p >= nu.partLo && p < nu.partHi)
			if masked && !swAblate.on {
				st.cells[p].Obs = append(st.cells[p].Obs, o)
				continue
			}
			cp := math.Max(0, math.Min(1, c+ptCover[p]*c))
			a := 1 - math.Exp(-d.Sub(harvest).Hours()/24/weatherDays)
			res := wetten4(rmix(stover, weathered, weather*a*nu.weathering), kStraw, nu.wet)
			sl := wetten4(ptSoil[p], kSoil, nu.wet)
			r := rmix(rmix(sl, res, cp), swGreen, nu.green)
			if snow[i] > 0 || swAblate.on {
				r = rmix(r, swSnow, math.Min(1, nu.snow*uni(rr, 0.5, 1.5)))
			}
			e := nu.edge
			if !(p >= edgeLo && p < edgeHi) {
				e = 0
			}
			r = swSense(rr, r, nu.haze, e, offs[ps.sensor], gain[ps.sensor], nu.dg)
			if masked {
				st.cells[p].Obs = append(st.cells[p].Obs, o)
				continue
			}
			o.NDVI, o.NDTI = r.ndvi(), r.ndti()
			o.Red, o.NIR, o.SWIR1, o.SWIR2 = r[0], r[1], r[2], r[3]
			st.cells[p].Obs = append(st.cells[p].Obs, o)
		}
	}
	for p := range st.cells {
		st.cells[p].Obs = sortObs(st.cells[p].Obs)
	}
	st.lat = &shortLatent{harvest, ground, soil, stover, weathered, weather, weatherDays, ds, kStraw, kSoil, wet}
	return st
}

// swSense puts on a surface's reflectance r what reaches the sensor:
// haze, a cloud edge over the point (edge: its share, 0 for none), the
// product of the gains (in order) and the offset, then each reading's
// noise (2 % and 0.006 of reflectance).
func swSense(rng *rand.Rand, r refl, haze, edge float64, offs refl, gains ...refl) refl {
	if haze > 0 {
		r[0] += 0.04 * haze
		r[1] += 0.03 * haze
		r[2] += 0.01 * haze
		r[3] += 0.005 * haze
	}
	if edge > 0 {
		r = rmix(r, swCloud, edge)
	}
	for b := range r {
		for _, g := range gains {
			r[b] *= g[b]
		}
		r[b] += offs[b]
		n1, n2 := rng.NormFloat64(), rng.NormFloat64()
		if swAblate.noise {
			n1, n2 = 0, 0
		}
		r[b] = math.Max(0.001, r[b]*(1+0.02*n1)+0.006*n2)
	}
	return r
}

// swNuisance is what one pass of the short world puts on its readings:
// the weather's cloud mask and the snow's, the partial cloud [partLo,
// partHi), haze, the cloud edge's share, the SLC-off gap width, green
// cover, the day's wetness and snow, the share of the stover's
// weathering, and the per-date band gains.
type swNuisance struct {
	cloud, snowFlag                                  bool
	partLo, partHi                                   int
	haze, edge, slcGap, green, wet, snow, weathering float64
	dg                                               refl
}

// pass returns a pass's nuisances with those of the ablation turned off
// (all of them as drawn for the zero value).
func (a shortAblation) pass(nu swNuisance) swNuisance {
	if a.clouds {
		nu.cloud, nu.partLo, nu.partHi = false, 0, 0
	}
	if a.snow {
		nu.snowFlag, nu.snow = false, 0
	}
	if a.haze {
		nu.haze = 0
	}
	if a.edge {
		nu.edge = 0
	}
	if a.dategain {
		nu.dg = refl{1, 1, 1, 1}
	}
	if a.slc {
		nu.slcGap = 0
	}
	if a.green {
		nu.green = 0
	}
	if a.wet {
		nu.wet = 0
	}
	if a.weather {
		nu.weathering = 0
	}
	return nu
}

func wetten4(r refl, k [3]float64, w float64) refl {
	return refl{r[0] * (1 - k[0]*w), r[1] * (1 - k[0]*w), r[2] * (1 - k[1]*w), r[3] * (1 - k[2]*w)}
}

func poisson(rng *rand.Rand, mean float64) int {
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= rng.Float64()
		if p < l {
			return k
		}
		k++
	}
}

// sortObs orders a cell's readings by date and keeps one per date (the
// first clear one), as the pipeline does (seriesByCell).
func sortObs(o []Obs) []Obs {
	sort.SliceStable(o, func(i, j int) bool { return o[i].Date.Before(o[j].Date) })
	out := o[:0]
	for _, x := range o {
		if n := len(out); n > 0 && out[n-1].Date.Equal(x.Date) {
			if math.IsNaN(out[n-1].NDVI) && !math.IsNaN(x.NDVI) {
				out[n-1] = x
			}
			continue
		}
		out = append(out, x)
	}
	return out
}
