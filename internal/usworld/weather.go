package usworld

import (
	"math"
	"math/rand/v2"
	"time"
)

// weather is one window's snow and surface wetness at a field.
type weather struct {
	snow  []episode
	rains []rain
	thaw  float64 // wetness floor of the thaw season (mid-February to March)
	year  int     // crop year
}

type episode struct {
	start time.Time
	days  float64
	f0    float64 // snow fraction at the start
}

type rain struct {
	at        time.Time
	intensity float64
}

// drawWeather draws the snow and rain of a window. Snow: Corn Belt fields
// have snow on the ground 20–80 days a winter, more to the north (NOAA
// snow-cover climatology; Iowa ≈ 40–60 d), in episodes of days to weeks
// between December and mid-March: Poisson(2 + (lat − 39.5)) episodes of
// 2 + Exp(8) days (≤ 40), each starting at 60–100 % cover and melting
// patchily over its last 40 %. Rain: days wetting the surface (≥ 5 mm)
// about 4–6 a month in the Midwest's cold season (NOAA normals), so a
// Poisson rate of 0.15 a day; snowmelt wets like a rain. Thaw: frozen
// soils thaw and stay wet from mid-February through March.
func drawWeather(rng *rand.Rand, cropYear int, lat float64, snowOn bool) weather {
	w := weather{year: cropYear, thaw: uniform(rng, 0.15, 0.5)}
	start, end := date(cropYear-1, time.November, 1), date(cropYear, time.May, 31)
	if snowOn {
		n := poisson(rng, 2+(lat-39.5))
		for range n {
			s := date(cropYear-1, time.December, 1).AddDate(0, 0, rng.IntN(105))
			e := episode{start: s, days: math.Min(40, 2+rng.ExpFloat64()*8), f0: uniform(rng, 0.6, 1.0)}
			w.snow = append(w.snow, e)
			w.rains = append(w.rains, rain{s.AddDate(0, 0, int(e.days)), 1})
		}
	}
	for d := start; d.Before(end); d = d.AddDate(0, 0, 1) {
		if rng.Float64() < 0.15 {
			w.rains = append(w.rains, rain{d, uniform(rng, 0.3, 1.0)})
		}
	}
	return w
}

func poisson(rng *rand.Rand, lambda float64) int {
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= rng.Float64()
		if p < l {
			return k
		}
		k++
	}
}

// snowAt is the field's snow fraction on day t.
func (w weather) snowAt(t time.Time) float64 {
	f := 0.0
	for _, e := range w.snow {
		x := t.Sub(e.start).Hours() / 24 / e.days
		if x < 0 || x > 1 {
			continue
		}
		s := e.f0
		if x > 0.6 {
			s *= (1 - x) / 0.4
		}
		f = math.Max(f, s)
	}
	return f
}

// wetAt is the surface wetness (0 dry .. 1 saturated) on day t: each rain
// dries out exponentially, slowly in the cold months (τ = 4 d, Nov–Mar) and
// faster in spring (τ = 2 d); the thaw season keeps a floor.
func (w weather) wetAt(t time.Time) float64 {
	tau := 4.0
	if t.Month() == time.April || t.Month() == time.May {
		tau = 2
	}
	v := 0.0
	for _, r := range w.rains {
		dt := t.Sub(r.at).Hours() / 24
		if dt < 0 || dt > 6*tau {
			continue
		}
		v = math.Max(v, r.intensity*math.Exp(-dt/tau))
	}
	if thawStart := date(w.year, time.February, 15); !t.Before(thawStart) && t.Before(date(w.year, time.April, 1)) {
		v = math.Max(v, w.thaw)
	}
	return v
}

// clearProb is the chance a scene over a Corn Belt field is cloud-free, by
// month: winter is the cloudiest season of the Midwest (Ju & Roy 2008,
// Remote Sens. Environ. 112:1196: ETM+ cloud cover over the conterminous
// US ≈ 60–70 % in winter over the Great Lakes–Corn Belt; Kovalskyy & Roy
// 2013; King et al. 2013 MODIS cloud climatology).
func clearProb(m time.Month) float64 {
	switch m {
	case time.November:
		return 0.42
	case time.December:
		return 0.30
	case time.January:
		return 0.32
	case time.February:
		return 0.38
	case time.March:
		return 0.36
	case time.April:
		return 0.40
	default:
		return 0.45
	}
}
