package usworld

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// site is what stays the same at a field from year to year.
type site struct {
	lat                  float64
	soil, residue, snow  spec
	soilK, coverK, wetK  []float64 // per point: soil brightness, cover and wetness factors
	x, y                 []float64 // metres
	slcShare, slcAngle   float64
	phase8, phase2, path int
	sidelap, coverCrop   bool
	weedMax              float64
}

// drawSite draws a field's soil, stover, points and acquisition geometry.
// Within a field soil brightness varies ± 8 % (eroded knolls lighter),
// residue cover ± 8 % and wetness ± 30 % (low spots wetter) between points.
// Cereal-rye cover crops on about 10 % of no-till fields (the 2017 Census
// of Agriculture counts ≈ 15.4 M acres of cover crops, ≈ 4 % of cropland;
// no-till farms adopt them more; 10 % is this world's choice). Spring winter-annual weeds reach 0–12 % green cover by May.
func drawSite(rng *rand.Rand, cfg Config, lat float64, side int, step float64) *site {
	st := &site{lat: lat, soil: drawSoil(rng), residue: drawResidue(rng, cfg.WideContrast), snow: drawSnow(rng),
		slcShare: uniform(rng, 0, 0.45), slcAngle: uniform(rng, 0.12, 0.22),
		phase8: rng.IntN(16), phase2: rng.IntN(10), path: 20 + rng.IntN(10),
		sidelap: rng.Float64() < 0.25, coverCrop: rng.Float64() < 0.10, weedMax: uniform(rng, 0, 0.12)}
	for p := range cfg.Points {
		st.x = append(st.x, float64(p%side)*step)
		st.y = append(st.y, float64(p/side)*step)
		st.soilK = append(st.soilK, math.Exp(rng.NormFloat64()*0.08))
		st.coverK = append(st.coverK, math.Exp(rng.NormFloat64()*0.08))
		st.wetK = append(st.wetK, clamp(1+rng.NormFloat64()*0.3, 0.4, 1.6))
	}
	return st
}

// yearState is one window's drawn truth at a field.
type yearState struct {
	fy                 FieldYear
	cover0, overwinter float64
	retain             [][]float64 // per pass, per point
	wx                 weather
	coverCrop          bool
	ccMax              float64
	ccEnd, burndown    time.Time
}

func simulateYear(rng *rand.Rand, cfg Config, cal calibration, st *site, system string, cropYear int) FieldYear {
	a := cfg.Artifacts
	ys := &yearState{}
	fy := &ys.fy
	fy.CropYear = cropYear
	fy.Start = date(cropYear-1, time.November, 1)
	fy.Harvest, fy.Planting = harvestDate(rng, cropYear), plantingDate(rng, cropYear)
	fy.End = fy.Planting.AddDate(0, 0, rng.IntN(6))
	ys.cover0, ys.overwinter = drawCover(rng)
	fy.Passes = passes(rng, system, fy.Harvest, fy.Planting, a.FallBeforeWindow)
	for range fy.Passes {
		r := make([]float64, len(st.x))
		for p := range r {
			r[p] = math.Exp(rng.NormFloat64() * 0.12) // the implement's effect varies across the field
		}
		ys.retain = append(ys.retain, r)
	}
	ys.wx = drawWeather(rng, cropYear, st.lat, a.Snow)
	ys.coverCrop = a.Green && st.coverCrop && system == "no-till"
	ys.ccMax = uniform(rng, 0.3, 0.6)
	ys.ccEnd = fy.Planting.AddDate(0, 0, -(7 + rng.IntN(15)))
	ys.burndown = fy.Planting.AddDate(0, 0, -rng.IntN(11))
	for _, sc := range schedule(st, fy.Start, fy.End) {
		fy.Readings = append(fy.Readings, sceneReadings(rng, a, cal, st, ys, sc)...)
	}
	sum := 0.0
	for p := range st.x {
		c, _ := ys.surface(a, st, p, fy.Planting)
		sum += c
	}
	fy.CoverAtPlanting = sum / float64(len(st.x))
	ys.truthDrops(a, st)
	return *fy
}

// truthDrops sets each pass's Drop and the window's WindowDrop from the
// noise-free field-median NDTI of the bare, dry, snow-free surface.
func (ys *yearState) truthDrops(a Artifacts, st *site) {
	bare := Artifacts{Aging: a.Aging}
	level := func(t time.Time) float64 {
		v := make([]float64, len(st.x))
		for p := range v {
			v[p] = ndti(ys.pointSpec(bare, st, p, t, 0))
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	fy := &ys.fy
	var first time.Time
	for i, ps := range fy.Passes {
		fy.Passes[i].Drop = level(ps.Date.AddDate(0, 0, -1)) - level(ps.Date.AddDate(0, 0, 1))
		if ps.Date.After(fy.Start) && !ps.Date.After(fy.End) && (first.IsZero() || ps.Date.Before(first)) {
			first = ps.Date
		}
	}
	if !first.IsZero() {
		fy.WindowDrop = level(first.AddDate(0, 0, -1)) - level(fy.End)
	}
}

// surface is point p's residue cover and green fraction on day t.
func (ys *yearState) surface(a Artifacts, st *site, p int, t time.Time) (cover, g float64) {
	fy := &ys.fy
	if t.Before(fy.Harvest) { // standing senescent maize: stover-like, a little green left
		return 0.97, math.Min(0.1, 0.05*fy.Harvest.Sub(t).Hours()/24/30)
	}
	span := fy.Planting.Sub(fy.Harvest).Hours()
	frac := clamp(t.Sub(fy.Harvest).Hours()/span, 0, 1)
	cover = clamp(ys.cover0*st.coverK[p], 0, 0.99) * (1 - (1-ys.overwinter)*frac)
	tilledSpring := false
	for i, ps := range fy.Passes {
		if !ps.Date.After(t) {
			cover *= clamp(ps.Retain*ys.retain[i][p], 0, 1)
			tilledSpring = tilledSpring || ps.Date.Month() >= time.March && ps.Date.Year() == fy.CropYear
		}
	}
	if !a.Green {
		return clamp(cover, 0, 0.99), 0
	}
	days := func(from time.Time) float64 { return t.Sub(from).Hours() / 24 }
	if ys.coverCrop {
		g = 0.05 + (ys.ccMax-0.05)*clamp(days(date(fy.CropYear, time.March, 1))/60, 0, 1)
		if t.After(ys.ccEnd) { // terminated: green turns to dead residue over two weeks
			gEnd := 0.05 + (ys.ccMax-0.05)*clamp(ys.ccEnd.Sub(date(fy.CropYear, time.March, 1)).Hours()/24/60, 0, 1)
			g = gEnd * math.Max(0, 1-days(ys.ccEnd)/14)
			cover += (gEnd - g) * 0.9 * (1 - cover)
		}
		return clamp(cover, 0, 0.99), g
	}
	weeds := st.weedMax * clamp(days(date(fy.CropYear, time.April, 1))/30, 0, 1)
	if tilledSpring || t.After(ys.burndown) {
		weeds = 0
	}
	return clamp(cover, 0, 0.99), weeds
}

// wetness of point p on day t: the weather's, and freshly tilled soil,
// moist, for a few days after a pass.
func (ys *yearState) wetness(a Artifacts, st *site, p int, t time.Time) float64 {
	if !a.Moisture {
		return 0
	}
	w := ys.wx.wetAt(t) * st.wetK[p]
	for _, ps := range ys.fy.Passes {
		if dt := t.Sub(ps.Date).Hours() / 24; dt >= 0 && dt < 10 {
			w = math.Max(w, 0.5*math.Exp(-dt/3))
		}
	}
	return clamp(w, 0, 1)
}

// sortReadings orders readings by day, point.
func sortReadings(rs []Reading) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Day != rs[j].Day {
			return rs[i].Day < rs[j].Day
		}
		return rs[i].Point < rs[j].Point
	})
}
