package pheno

import (
	"math"
	"math/rand/v2"
	"time"
)

// Spectra selects how a scenario's surfaces look.
type Spectra int

const (
	// SpectraReference is the historical world: one green, one straw and
	// one soil spectrum for every field (GreenEndmember, StrawEndmember,
	// SoilEndmember; the soil scaled ±10 % in brightness and ±3 % in SWIR1),
	// always dry. These are the spectra manejo's reference endmember set
	// also assumes, so figures measured on it flatter the estimators.
	SpectraReference Spectra = iota
	// SpectraVaried is the harder world of issue 17, which shares neither
	// the estimators' spectra nor their rules:
	//   - straw by residue type (soybean, maize, millet/brachiaria cover,
	//     weeds), each band jittered ±6 % per field, darkening and losing
	//     its cellulose/lignin SWIR2 absorption as it ages (a per-field
	//     share and rate of humification): dry straw NDTI ≈ 0.14–0.33;
	//   - the soil drawn from three Brazilian soils (red oxisol — Latossolo
	//     Vermelho —, dark clayey latosol — Latossolo Vermelho
	//     distroférrico —, sandy neosol — Neossolo Quartzarênico), each
	//     band jittered ±5 % per field;
	//   - a daily surface-moisture state (rain events by month, drying over
	//     a few days) that darkens soil and residue, SWIR most, and narrows
	//     their NDTI contrast (wet straw loses NDTI, Quemada & Daughtry 2016;
	//     per-field coefficients);
	//   - the green canopy spectrum by crop, each band jittered ±5 % per field.
	SpectraVaried
)

// Soil kinds of the varied world.
const (
	SoilRedOxisol    = "red oxisol"
	SoilDarkLatosol  = "dark clayey latosol"
	SoilSandyNeosol  = "sandy neosol"
	residueHumified  = "humified"
	wetDryingDays    = 2.5 // e-folding days of surface drying after rain
	ageHumifyMaxDays = 2000
)

// soilSpectra are the dry reference soils of the varied world (surface
// reflectance; after Demattê et al. 2004 and the Brazilian soil spectral
// library ranges: oxisols dark and flat in SWIR, quartz sands bright).
var soilSpectra = map[string]Reflectance{
	SoilRedOxisol:   {Red: 0.14, NIR: 0.19, SWIR1: 0.30, SWIR2: 0.27},
	SoilDarkLatosol: {Red: 0.075, NIR: 0.11, SWIR1: 0.19, SWIR2: 0.18},
	SoilSandyNeosol: {Red: 0.23, NIR: 0.28, SWIR1: 0.38, SWIR2: 0.32},
}

// SoilKinds lists the soils of the varied world in a fixed order.
var SoilKinds = []string{SoilRedOxisol, SoilDarkLatosol, SoilSandyNeosol}

// freshStraw is fresh dry residue by the crop that left it; residueHumified
// is what it tends to as it decomposes (dark, little SWIR2 absorption).
var freshStraw = map[string]Reflectance{
	Soja:            {Red: 0.17, NIR: 0.25, SWIR1: 0.38, SWIR2: 0.21},
	Milho:           {Red: 0.19, NIR: 0.28, SWIR1: 0.40, SWIR2: 0.23},
	Safrinha:        {Red: 0.19, NIR: 0.28, SWIR1: 0.40, SWIR2: 0.23},
	Cobertura:       {Red: 0.15, NIR: 0.24, SWIR1: 0.36, SWIR2: 0.19},
	Pousio:          {Red: 0.14, NIR: 0.22, SWIR1: 0.31, SWIR2: 0.20},
	residueHumified: {Red: 0.09, NIR: 0.13, SWIR1: 0.19, SWIR2: 0.165},
}

// greenByCrop is a closed canopy by crop.
var greenByCrop = map[string]Reflectance{
	Soja:      {Red: 0.035, NIR: 0.46, SWIR1: 0.22, SWIR2: 0.10},
	Milho:     {Red: 0.04, NIR: 0.42, SWIR1: 0.24, SWIR2: 0.115},
	Safrinha:  {Red: 0.04, NIR: 0.42, SWIR1: 0.24, SWIR2: 0.115},
	Cobertura: {Red: 0.045, NIR: 0.40, SWIR1: 0.25, SWIR2: 0.12},
	Pousio:    {Red: 0.05, NIR: 0.36, SWIR1: 0.26, SWIR2: 0.13},
}

// rainByMonth is the chance of a wetting rain on a day, January first
// (Cerrado: wet October–April, dry May–September).
var rainByMonth = [12]float64{0.45, 0.45, 0.4, 0.22, 0.07, 0.02, 0.01, 0.03, 0.1, 0.28, 0.4, 0.45}

// world holds one field's draw of the varied spectra.
type world struct {
	soilKind string
	green    map[string]Reflectance
	straw    map[string]Reflectance // fresh, by residue crop, and residueHumified
	humify   float64                // share of the humified spectrum reached by old straw
	humDays  float64                // e-folding age of humification, days
	// Darkening of straw and soil at full wetness: VNIR, SWIR1, SWIR2.
	wetStraw, wetSoil [3]float64
	wet               []float64 // daily wetness 0..1, index = days since Start
	rain              []bool    // a wetting rain fell that day (its pass is cloudy)
}

func jitter(rng *rand.Rand, r Reflectance, a float64) Reflectance {
	return Reflectance{r.Red * uniform(rng, 1-a, 1+a), r.NIR * uniform(rng, 1-a, 1+a),
		r.SWIR1 * uniform(rng, 1-a, 1+a), r.SWIR2 * uniform(rng, 1-a, 1+a)}
}

// drawWorld draws a field's varied spectra and its daily wetness.
func (s *Scenario) drawWorld(rng *rand.Rand) {
	w := &world{green: map[string]Reflectance{}, straw: map[string]Reflectance{}}
	w.soilKind = SoilKinds[rng.IntN(len(SoilKinds))]
	s.Soil = jitter(rng, soilSpectra[w.soilKind], 0.05)
	for _, c := range []string{Soja, Milho, Safrinha, Cobertura, Pousio} {
		w.green[c] = jitter(rng, greenByCrop[c], 0.05)
	}
	for _, c := range []string{Soja, Milho, Safrinha, Cobertura, Pousio, residueHumified} {
		w.straw[c] = jitter(rng, freshStraw[c], 0.06)
	}
	w.humify, w.humDays = uniform(rng, 0.25, 0.7), uniform(rng, 90, 300)
	kv, k1 := uniform(rng, 0.2, 0.35), uniform(rng, 0.35, 0.5)
	w.wetStraw = [3]float64{kv, k1, k1 * uniform(rng, 0.65, 0.85)}
	w.wetSoil = [3]float64{kv, k1, k1 * uniform(rng, 0.95, 1.08)}
	n := s.index(s.End) + 1
	w.wet, w.rain = make([]float64, n), make([]bool, n)
	wet := 0.0
	for i := range n {
		d := s.Start.AddDate(0, 0, i)
		wet *= math.Exp(-1 / wetDryingDays)
		if rng.Float64() < rainByMonth[d.Month()-1] {
			wet = math.Max(wet, uniform(rng, 0.5, 1))
			w.rain[i] = true
		}
		w.wet[i] = wet
	}
	s.world = w
}

// wetten darkens r by wetness w with the per-band coefficients k.
func wetten(r Reflectance, k [3]float64, w float64) Reflectance {
	return Reflectance{r.Red * (1 - k[0]*w), r.NIR * (1 - k[0]*w), r.SWIR1 * (1 - k[1]*w), r.SWIR2 * (1 - k[2]*w)}
}

// agedStraw is the dry spectrum of residue of crop aged age days.
func (w *world) agedStraw(crop string, age float64) Reflectance {
	f, ok := w.straw[crop]
	if !ok {
		f = w.straw[Soja]
	}
	a := w.humify * (1 - math.Exp(-age/w.humDays))
	return f.scale(1 - a).add(w.straw[residueHumified].scale(a))
}

// variedReflectance is Reflectance in the varied world.
func (s *Scenario) variedReflectance(d time.Time) Reflectance {
	w := s.world
	i := max(0, min(s.index(d), len(s.green)-1))
	g, dr := s.green[i], s.dry[i]
	ground := 1 - g - dr
	wet := w.wet[i]
	out := s.canopyGreen[i].scale(g)
	out = out.add(wetten(s.canopyDry[i], w.wetStraw, wet).scale(dr))
	return s.addGround(out, i, ground, w.agedStraw(s.residue[i], float64(s.residueAge[i])), w.wetStraw, w.wetSoil, wet)
}

// GroundStrawNDTI returns the NDTI of the dry ground-straw spectrum on day d
// (its residue type and age; the reference straw's in the reference world;
// blended with soil in a Twin).
func (s *Scenario) GroundStrawNDTI(d time.Time) float64 {
	return s.GroundStrawSpectrum(d).NDTI()
}

// SoilKind names the field's soil (SoilRedOxisol in the reference world).
func (s *Scenario) SoilKind() string {
	if s.world == nil {
		return SoilRedOxisol
	}
	return s.world.soilKind
}

// Wetness returns the surface wetness (0 dry .. 1 soaked) on day d; always
// 0 in the reference world.
func (s *Scenario) Wetness(d time.Time) float64 {
	if s.world == nil {
		return 0
	}
	return s.world.wet[max(0, min(s.index(d), len(s.world.wet)-1))]
}

// GroundStrawSpectrum returns the dry ground-straw spectrum on day d (its
// residue type and age; StrawEndmember in the reference world; blended
// with soil in a Twin).
func (s *Scenario) GroundStrawSpectrum(d time.Time) Reflectance {
	i := max(0, min(s.index(d), len(s.green)-1))
	if s.world == nil {
		return s.twinStraw(i, StrawEndmember)
	}
	return s.twinStraw(i, s.world.agedStraw(s.residue[i], float64(s.residueAge[i])))
}

// rained reports whether a wetting rain fell on day d (varied world only):
// the pass of a rainy day is cloudy, so a clear reading is at best a day
// after the rain, on a surface drying since.
func (s *Scenario) rained(d time.Time) bool {
	if s.world == nil {
		return false
	}
	i := s.index(d)
	return i >= 0 && i < len(s.world.rain) && s.world.rain[i]
}

// Dried returns s with a surface that never wets: the varied world's daily
// wetness set to 0, a rainy day's pass still cloudy. Its truth is s's; only
// the reflectance of wet days changes. For diagnostics that measure what
// wetness costs an estimator (coverage's TestStrawDecomposition); the
// reference world is returned as it is.
func (s *Scenario) Dried() *Scenario {
	return s.withWorld(func(w *world) { w.wet = make([]float64, len(w.wet)) })
}

// Unclouded returns s with no pass forced cloudy by rain (the varied
// world's rain days no longer hide the surface; Observe's other clouds
// are unchanged). For diagnostics, as Dried.
func (s *Scenario) Unclouded() *Scenario {
	return s.withWorld(func(w *world) { w.rain = make([]bool, len(w.rain)) })
}

// withWorld returns a copy of s whose varied world edit changed (s and
// its world unchanged), or s itself in the reference world.
func (s *Scenario) withWorld(edit func(w *world)) *Scenario {
	if s.world == nil {
		return s
	}
	c, w := *s, *s.world
	edit(&w)
	c.world = &w
	return &c
}
