package usworld

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// sky is a scene's cloud state over a field: which points the cloud mask
// removes and what leaks into the points it leaves.
type sky struct {
	masked []bool
	tau    []float64 // thin cloud left in a clear reading (0: none)
	shade  []float64 // unflagged shadow factor (0: none)
	ratio  float64   // the leaking cloud's SWIR2/SWIR1
}

// drawSky draws a scene's clouds. Clear with clearProb of the month;
// otherwise partly cloudy (18 %: a cloud edge crossing the field, 20–90 %
// masked) or overcast. What the masks miss (Foga et al. 2017, Remote Sens.
// Environ. 194:379: CFMask omits a few per cent of cloud, mostly thin cloud
// and edges; Baetens et al. 2019, Remote Sens. 11:433: Sen2Cor's omission
// higher than Fmask's): an overcast scene passes unflagged as thin cloud
// over the whole field in 4 % of Landsat and 8 % of Sentinel-2 scenes; at a
// partial cloud's edge the points within 0–150 m of the mask get a thin
// cloud fading outwards, and half the partial scenes leave a shadow band
// 100–400 m away unflagged.
func drawSky(rng *rand.Rand, a Artifacts, st *site, sc scene) sky {
	n := len(st.x)
	s := sky{masked: make([]bool, n), tau: make([]float64, n), shade: make([]float64, n), ratio: uniform(rng, 0.7, 1.0)}
	u := rng.Float64()
	pc := clearProb(sc.date.Month())
	switch {
	case !a.Clouds || u < pc:
		return s
	case u < pc+0.18:
		partialSky(rng, a, st, &s)
	default:
		leak := 0.04
		if sc.sensor == S2A || sc.sensor == S2B {
			leak = 0.08
		}
		thin := a.Leaks && rng.Float64() < leak
		tau := uniform(rng, 0.05, 0.3)
		for p := range s.masked {
			s.masked[p] = !thin
			if thin {
				s.tau[p] = clamp(tau+rng.NormFloat64()*0.03, 0, 1)
			}
		}
	}
	return s
}

func partialSky(rng *rand.Rand, a Artifacts, st *site, s *sky) {
	th := uniform(rng, 0, 2*math.Pi)
	proj := make([]float64, len(st.x))
	for p := range proj {
		proj[p] = st.x[p]*math.Cos(th) + st.y[p]*math.Sin(th)
	}
	sorted := append([]float64(nil), proj...)
	sort.Float64s(sorted)
	cut := sorted[int(uniform(rng, 0.1, 0.8)*float64(len(sorted)))]
	edge, tau0 := uniform(rng, 0, 150), uniform(rng, 0.1, 0.35)
	shadowOn, off, width, k := rng.Float64() < 0.5, uniform(rng, 100, 400), uniform(rng, 30, 150), uniform(rng, 0.25, 0.6)
	for p, v := range proj {
		if v > cut {
			s.masked[p] = true
			continue
		}
		if !a.Leaks {
			continue
		}
		if d := cut - v; d < edge {
			s.tau[p] = tau0 * (1 - d/edge)
		}
		if d := cut - v; shadowOn && d > off && d < off+width {
			s.shade[p] = k
		}
	}
}

// sceneNoise is a scene's atmospheric-correction residual, common to the
// field's points: a gain shared by the bands (aerosol) and a little per
// band, and an offset; Vermote et al. 2016 (Remote Sens. Environ. 185:46)
// give LaSRC surface reflectance accuracy ≈ 0.005 + 0.05ρ.
func sceneNoise(rng *rand.Rand, on bool) (gain, off spec) {
	gain = spec{1, 1, 1, 1}
	if !on {
		return gain, off
	}
	g := 1 + rng.NormFloat64()*0.025
	for b := range gain {
		gain[b] = g * (1 + rng.NormFloat64()*0.008)
		off[b] = rng.NormFloat64() * 0.003
	}
	return gain, off
}

// sceneReadings draws a scene's clear readings of a field's points.
func sceneReadings(rng *rand.Rand, a Artifacts, cal calibration, st *site, ys *yearState, sc scene) []Reading {
	sk := drawSky(rng, a, st, sc)
	gain, off := sceneNoise(rng, a.SceneNoise)
	slcPhase := rng.Float64()
	snowField := ys.wx.snowAt(sc.date)
	snowThreshold := uniform(rng, 0.15, 0.5) // Fmask / Sen2Cor snow flag: patchy snow below it is missed
	if !a.Leaks {
		snowThreshold = 0.01
	}
	var out []Reading
	for p := range st.x {
		if sk.masked[p] || (a.SLCOff && sc.sensor == L7 && slcGap(st, st.x[p], st.y[p], slcPhase)) {
			continue
		}
		fs := 0.0
		if snowField > 0 {
			fs = clamp(snowField+(rng.Float64()-0.5)*0.3, 0, 1) // drifts: patchy across the field
		}
		if fs > snowThreshold {
			continue
		}
		r := ys.pointSpec(a, st, p, sc.date, fs)
		for b := range r { // the point's own noise: sensor noise, geolocation, sub-pixel mixing
			r[b] += rng.NormFloat64() * (0.003 + 0.02*r[b])
			r[b] = r[b]*gain[b] + off[b]
		}
		if sk.tau[p] > 0 {
			r = thinCloud(r, sk.tau[p], sk.ratio)
		}
		if sk.shade[p] > 0 {
			r = shadow(r, sk.shade[p])
		}
		r = clip(cal.apply(sc.sensor, r))
		out = append(out, Reading{Day: day(sc.date), Point: int16(p), Sensor: sc.sensor,
			Red: float32(r[0]), NIR: float32(r[1]), SWIR16: float32(r[2]), SWIR22: float32(r[3])})
	}
	return out
}

// pointSpec is point p's surface reflectance on day t under snow fraction
// fs, before noise: soil and stover (wet and aged), green, snow, mixed
// linearly by area (Daughtry et al. 2005's mixture model).
func (ys *yearState) pointSpec(a Artifacts, st *site, p int, t time.Time, fs float64) spec {
	cover, g := ys.surface(a, st, p, t)
	w := ys.wetness(a, st, p, t)
	res := st.residue
	if a.Aging && !t.Before(ys.fy.Harvest) {
		res = agedResidue(res, clamp(t.Sub(ys.fy.Harvest).Hours()/24/180, 0, 1))
	}
	soil := st.soil.scale(spec{st.soilK[p], st.soilK[p], st.soilK[p], st.soilK[p]})
	ground := mix(wetten(soil, wetSoil, w), wetten(res, wetResidue, w), cover)
	return mix(mix(ground, green, g), st.snow, fs)
}
