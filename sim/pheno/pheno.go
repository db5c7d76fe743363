package pheno

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/manejo/manejo/zarc"
)

// Reflectance is a surface reflectance (0..1) in the four bands manejo uses:
// red, near infrared and the two short-wave infrared bands (Sentinel-2 B04,
// B08, B11, B12; Landsat 8/9 B4, B5, B6, B7).
type Reflectance struct{ Red, NIR, SWIR1, SWIR2 float64 }

// NDVI returns (NIR − Red)/(NIR + Red).
func (r Reflectance) NDVI() float64 { return (r.NIR - r.Red) / (r.NIR + r.Red) }

// NDTI returns (SWIR1 − SWIR2)/(SWIR1 + SWIR2).
func (r Reflectance) NDTI() float64 { return (r.SWIR1 - r.SWIR2) / (r.SWIR1 + r.SWIR2) }

func (r Reflectance) scale(k float64) Reflectance {
	return Reflectance{r.Red * k, r.NIR * k, r.SWIR1 * k, r.SWIR2 * k}
}

func (r Reflectance) add(o Reflectance) Reflectance {
	return Reflectance{r.Red + o.Red, r.NIR + o.NIR, r.SWIR1 + o.SWIR1, r.SWIR2 + o.SWIR2}
}

// Endmember spectra (surface reflectance).
var (
	// GreenEndmember is a closed green canopy (soybean/maize at full cover).
	GreenEndmember = Reflectance{Red: 0.035, NIR: 0.45, SWIR1: 0.22, SWIR2: 0.10}
	// StrawEndmember is dry crop residue (soybean/maize/millet straw).
	StrawEndmember = Reflectance{Red: 0.16, NIR: 0.24, SWIR1: 0.36, SWIR2: 0.22}
	// SoilEndmember is a dry red oxisol (Latossolo Vermelho), the dominant
	// soil of Brazil's grain belt.
	SoilEndmember = Reflectance{Red: 0.14, NIR: 0.19, SWIR1: 0.30, SWIR2: 0.27}
)

// Crop kinds used in cycles.
const (
	Soja      = string(zarc.Soja)  // soybean, main (summer) crop
	Milho     = string(zarc.Milho) // maize as the main (summer) crop
	Safrinha  = "milho-2a"         // second-crop maize (safrinha), sown after soybean
	Cobertura = "cobertura"        // cover crop (millet, brachiaria), desiccated before the next sowing
	Pousio    = "pousio"           // fallow weeds / volunteer plants, desiccated or dried out
)

// Cycle is one crop (or weed) cycle on the field.
type Cycle struct {
	Crop      string    // Soja, Milho, Safrinha, Cobertura or Pousio
	Main      bool      // the main crop of its agricultural year (the one C is read before)
	Sowing    time.Time // sowing date (for Pousio: start of the weed flush)
	Emergence time.Time // emergence, 5–10 days after sowing
	Peak      time.Time // full canopy cover reached
	Senesce   time.Time // green leaves start to dry (maturation or herbicide)
	Harvest   time.Time // harvest, desiccation or dry-out: canopy becomes residue
	MaxCover  float64   // maximum canopy cover, 0..1
	Yield     float64   // share of the bare ground the residue covers at harvest, 0..1
}

// Tillage is one soil-revolving operation (IN 2/2025 item 2.1 IV).
type Tillage struct {
	Date      time.Time
	Kind      string  // ARAÇÃO, GRADAGEM, ESCARIFICAÇÃO or SUBSOLAGEM
	Retention float64 // share of the ground straw left on the surface, 0..1
}

// Scenario is the whole history of one field (or one pixel of it) between
// Start and End, days included.
type Scenario struct {
	Start, End time.Time
	Cycles     []Cycle   // sorted by sowing
	Tillage    []Tillage // sorted by date
	Soil       Reflectance
	// Half-lives of ground residue, in days, by the crop that left it.
	halfLife  map[string]float64
	initStraw float64

	// Daily state, index = days since Start.
	green, dry, straw []float64

	// The varied world (Options.Spectra), nil in the reference world; then
	// also, per day, the ground residue's crop and age (days since its
	// harvest) and the mean green and dry canopy spectra.
	world                  *world
	residue                []string
	residueAge             []int
	canopyGreen, canopyDry []Reflectance

	// share is, per day, the share of the ground residue's own spectrum
	// in a Twin (the rest is soil); nil otherwise.
	share []float64
}

func (s *Scenario) index(d time.Time) int {
	return int(zarc.Day(d).Sub(s.Start).Hours() / 24)
}

// Fractions returns the fractions of the pixel covered on day d by green
// vegetation, dry residue (standing or on the ground, visible from above)
// and bare soil. They add up to 1. Days outside [Start, End] take the nearest
// simulated day.
func (s *Scenario) Fractions(d time.Time) (green, straw, soil float64) {
	i := s.index(d)
	i = max(0, min(i, len(s.green)-1))
	g, dr, st := s.green[i], s.dry[i], s.straw[i]
	canopy := g + dr
	ground := 1 - canopy
	return g, dr + ground*st, ground * (1 - st)
}

// GroundStraw returns the share (0..1) of the ground covered by residue on
// day d, whatever the canopy above it.
func (s *Scenario) GroundStraw(d time.Time) float64 {
	i := max(0, min(s.index(d), len(s.straw)-1))
	return s.straw[i]
}

// Reflectance returns the noise-free surface reflectance on day d.
func (s *Scenario) Reflectance(d time.Time) Reflectance {
	if s.world != nil {
		return s.variedReflectance(d)
	}
	if s.share != nil {
		i := max(0, min(s.index(d), len(s.green)-1))
		g, dr := s.green[i], s.dry[i]
		out := GreenEndmember.scale(g).add(StrawEndmember.scale(dr))
		return s.addGround(out, i, 1-g-dr, StrawEndmember, [3]float64{}, [3]float64{}, 0)
	}
	g, st, so := s.Fractions(d)
	return GreenEndmember.scale(g).add(StrawEndmember.scale(st)).add(s.Soil.scale(so))
}

// StrawPct returns the mean visible straw cover, in percent of the pixel,
// over the days in [from, to). This is the ground truth of the pre-sowing
// straw cover that C averages (Portaria 349/2026, 6.7.2).
func (s *Scenario) StrawPct(from, to time.Time) float64 {
	var sum float64
	n := 0
	for d := zarc.Day(from); d.Before(zarc.Day(to)); d = d.AddDate(0, 0, 1) {
		_, st, _ := s.Fractions(d)
		sum += st
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return 100 * sum / float64(n)
}

// MainCycles returns the main-crop cycle of each agricultural year, in order.
func (s *Scenario) MainCycles() []Cycle {
	var out []Cycle
	for _, c := range s.Cycles {
		if c.Main {
			out = append(out, c)
		}
	}
	return out
}

// Options shape Random scenarios. The zero value means the defaults below.
type Options struct {
	MainCrop     string  // Soja (default) or Milho
	TillageProb  float64 // chance of one tillage per agricultural year; default 0.25, negative = never
	SafrinhaProb float64 // chance of second-crop maize after soybean; default 0.55
	CoverProb    float64 // chance of a cover crop after the main crop (when no safrinha); default 0.5
	// AgriYearStart is the month-day that starts an agricultural year
	// (default 07-01).
	AgriYearStart time.Month
	// Spectra picks the world's spectra; the zero value is the reference
	// world (see SpectraVaried).
	Spectra Spectra
}

func (o Options) withDefaults() Options {
	if o.MainCrop == "" {
		o.MainCrop = Soja
	}
	if o.TillageProb == 0 {
		o.TillageProb = 0.25
	}
	if o.SafrinhaProb == 0 {
		o.SafrinhaProb = 0.55
	}
	if o.CoverProb == 0 {
		o.CoverProb = 0.5
	}
	if o.AgriYearStart == 0 {
		o.AgriYearStart = time.July
	}
	return o
}

func uniform(rng *rand.Rand, a, b float64) float64 { return a + (b-a)*rng.Float64() }

func addDays(t time.Time, d float64) time.Time { return t.AddDate(0, 0, int(math.Round(d))) }

// Random draws a realistic field history between start and end (Mato Grosso
// / Paraná calendar): each agricultural year has a main crop sown between
// late September and late November (soybean) or September and November
// (maize), then second-crop maize, a cover crop or fallow; some years have
// a tillage before sowing or after the last harvest.
func Random(rng *rand.Rand, start, end time.Time, o Options) *Scenario {
	o = o.withDefaults()
	s := &Scenario{
		Start:     zarc.Day(start),
		End:       zarc.Day(end),
		initStraw: uniform(rng, 0.3, 0.8),
		halfLife: map[string]float64{
			Soja: uniform(rng, 60, 90), Milho: uniform(rng, 120, 170), Safrinha: uniform(rng, 120, 170),
			Cobertura: uniform(rng, 100, 150), Pousio: uniform(rng, 60, 90),
		},
	}
	k := uniform(rng, 0.9, 1.1)
	s.Soil = Reflectance{SoilEndmember.Red * k, SoilEndmember.NIR * k, SoilEndmember.SWIR1 * k * uniform(rng, 0.97, 1.03), SoilEndmember.SWIR2 * k}

	sowings := mainSowings(rng, s.Start, s.End, o)
	for i := 0; i+1 < len(sowings); i++ {
		sow, next := sowings[i], sowings[i+1]
		main := s.cropCycle(rng, o.MainCrop, true, sow)
		s.Cycles = append(s.Cycles, main)
		lastHarvest := s.afterMain(rng, o, main, next)
		lastHarvest = s.weedFlush(rng, next, lastHarvest)
		s.maybeTill(rng, o, next, lastHarvest)
	}
	sort.Slice(s.Cycles, func(i, j int) bool { return s.Cycles[i].Sowing.Before(s.Cycles[j].Sowing) })
	if o.Spectra == SpectraVaried {
		s.drawWorld(rng)
	}
	s.simulate()
	return s
}

// mainSowings draws the sowing day of the main crop of each agricultural
// year overlapping [start, end], plus the next one so that cover crops know
// when they are desiccated.
func mainSowings(rng *rand.Rand, start, end time.Time, o Options) []time.Time {
	var sowings []time.Time
	for y := start.Year() - 1; ; y++ {
		ayStart := time.Date(y, o.AgriYearStart, 1, 0, 0, 0, 0, time.UTC)
		if ayStart.After(end.AddDate(1, 0, 0)) {
			break
		}
		var lo, hi time.Time
		if o.MainCrop == Milho {
			lo, hi = time.Date(y, 9, 1, 0, 0, 0, 0, time.UTC), time.Date(y, 11, 30, 0, 0, 0, 0, time.UTC)
		} else {
			lo, hi = time.Date(y, 9, 20, 0, 0, 0, 0, time.UTC), time.Date(y, 11, 25, 0, 0, 0, 0, time.UTC)
		}
		// Most sowings concentrate in October: a triangular draw.
		u := (rng.Float64() + rng.Float64()) / 2
		sowings = append(sowings, addDays(lo, u*hi.Sub(lo).Hours()/24))
	}
	return sowings
}

// afterMain adds what follows the main crop until the next sowing:
// second-crop maize (after soybean), a cover crop or fallow. It returns the
// end of the last cycle added.
func (s *Scenario) afterMain(rng *rand.Rand, o Options, main Cycle, next time.Time) time.Time {
	var c Cycle
	switch r := rng.Float64(); {
	case o.MainCrop == Soja && r < o.SafrinhaProb:
		c = s.cropCycle(rng, Safrinha, false, addDays(main.Harvest, uniform(rng, 0, 6)))
	case r < o.SafrinhaProb+(1-o.SafrinhaProb)*o.CoverProb:
		c = s.cropCycle(rng, Cobertura, false, addDays(main.Harvest, uniform(rng, 0, 10)))
		// Cover crops stay until desiccation, 10–30 days before the next sowing.
		c.Harvest = addDays(next, -uniform(rng, 10, 30))
		// Millet and brachiaria dry out slowly through the dry season
		// (from mid-June) until the herbicide finishes them.
		c.Senesce = addDays(time.Date(c.Sowing.Year(), 6, 1, 0, 0, 0, 0, time.UTC), uniform(rng, 0, 30))
		if lo := c.Peak.AddDate(0, 0, 20); c.Senesce.Before(lo) {
			c.Senesce = lo
		}
		if hi := c.Harvest.AddDate(0, 0, -7); c.Senesce.After(hi) {
			c.Senesce = hi
		}
	default:
		c = s.cropCycle(rng, Pousio, false, addDays(main.Harvest, uniform(rng, 10, 25)))
	}
	s.Cycles = append(s.Cycles, c)
	return c.Harvest
}

// weedFlush may add a flush of weeds with the first rains, desiccated
// before the next sowing, when the field lay bare through the dry season.
// It returns the end of the last cycle.
func (s *Scenario) weedFlush(rng *rand.Rand, next, lastHarvest time.Time) time.Time {
	if next.Sub(lastHarvest) <= 70*24*time.Hour || rng.Float64() >= 0.4 {
		return lastHarvest
	}
	flushStart := addDays(next, -uniform(rng, 35, 55))
	if !flushStart.After(lastHarvest.AddDate(0, 0, 10)) {
		return lastHarvest
	}
	c := s.cropCycle(rng, Pousio, false, flushStart)
	c.MaxCover = uniform(rng, 0.15, 0.3)
	c.Harvest = addDays(next, -uniform(rng, 5, 15))
	c.Senesce = addDays(c.Harvest, -7)
	if !c.Harvest.After(c.Peak) {
		return lastHarvest
	}
	s.Cycles = append(s.Cycles, c)
	return c.Harvest
}

// maybeTill may add a tillage: most often in the weeks before the next
// sowing, sometimes right after the last harvest.
func (s *Scenario) maybeTill(rng *rand.Rand, o Options, next, lastHarvest time.Time) {
	if o.TillageProb <= 0 || rng.Float64() >= o.TillageProb {
		return
	}
	var d time.Time
	if rng.Float64() < 0.8 {
		d = addDays(next, -uniform(rng, 3, 35))
	} else {
		d = addDays(lastHarvest, uniform(rng, 3, 30))
	}
	if !d.Before(s.Start) && !d.After(s.End) && d.After(s.lastHarvestBefore(d).AddDate(0, 0, 2)) && d.Before(next) {
		s.Tillage = append(s.Tillage, randomTillage(rng, d))
	}
}

// lastHarvestBefore returns the end of the last cycle that emerged before d,
// or Start. A weed flush standing on d is cut at d: tillage destroys it.
func (s *Scenario) lastHarvestBefore(d time.Time) time.Time {
	last := s.Start
	for i := range s.Cycles {
		c := &s.Cycles[i]
		if !c.Emergence.Before(d) {
			continue
		}
		if c.Crop == Pousio && c.Harvest.After(d) {
			c.Harvest, c.Senesce, c.Yield = d, d.AddDate(0, 0, -1), 0
		}
		if c.Harvest.After(last) {
			last = c.Harvest
		}
	}
	return last
}

// randomTillage draws an operation kind and how much residue it leaves.
func randomTillage(rng *rand.Rand, d time.Time) Tillage {
	switch r := rng.Float64(); {
	case r < 0.5:
		return Tillage{Date: d, Kind: "GRADAGEM", Retention: uniform(rng, 0.10, 0.25)}
	case r < 0.7:
		return Tillage{Date: d, Kind: "ARAÇÃO", Retention: uniform(rng, 0.03, 0.10)}
	case r < 0.9:
		return Tillage{Date: d, Kind: "ESCARIFICAÇÃO", Retention: uniform(rng, 0.30, 0.45)}
	default:
		return Tillage{Date: d, Kind: "SUBSOLAGEM", Retention: uniform(rng, 0.35, 0.50)}
	}
}

// cropCycle builds a cycle of the given crop sown on sow, with durations
// from Brazilian agronomy: soybean 105–125 days to harvest, maize 125–150,
// emergence 5–10 days after sowing (ZARC).
func (s *Scenario) cropCycle(rng *rand.Rand, crop string, main bool, sow time.Time) Cycle {
	c := Cycle{Crop: crop, Main: main, Sowing: sow}
	var toPeak, cycle, senesce float64
	switch crop {
	case Soja:
		toPeak, cycle, senesce = uniform(rng, 45, 60), uniform(rng, 105, 125), uniform(rng, 22, 30)
		c.MaxCover, c.Yield = uniform(rng, 0.88, 0.97), uniform(rng, 0.45, 0.65)
	case Milho, Safrinha:
		toPeak, cycle, senesce = uniform(rng, 55, 70), uniform(rng, 125, 150), uniform(rng, 30, 40)
		c.MaxCover, c.Yield = uniform(rng, 0.85, 0.95), uniform(rng, 0.65, 0.85)
	case Cobertura:
		toPeak, cycle, senesce = uniform(rng, 45, 60), uniform(rng, 110, 150), uniform(rng, 20, 40)
		c.MaxCover, c.Yield = uniform(rng, 0.75, 0.92), uniform(rng, 0.75, 0.92)
	default: // Pousio
		toPeak, cycle, senesce = uniform(rng, 30, 50), uniform(rng, 80, 120), uniform(rng, 20, 40)
		c.MaxCover, c.Yield = uniform(rng, 0.2, 0.45), uniform(rng, 0.15, 0.35)
	}
	c.Emergence = addDays(sow, uniform(rng, 5, 10))
	c.Peak = addDays(c.Emergence, toPeak)
	c.Harvest = addDays(c.Emergence, cycle)
	c.Senesce = addDays(c.Harvest, -senesce)
	return c
}

// WithTillage returns a copy of s with one more tillage on d, as on a strip
// of the field tilled alone (a headland, IN 2.3 III).
func (s *Scenario) WithTillage(t Tillage) *Scenario {
	c := *s
	c.Tillage = append(append([]Tillage(nil), s.Tillage...), t)
	sort.Slice(c.Tillage, func(i, j int) bool { return c.Tillage[i].Date.Before(c.Tillage[j].Date) })
	c.simulate()
	return &c
}

// simulate fills the daily green, dry-canopy and ground-straw arrays.
func (s *Scenario) simulate() {
	n := s.index(s.End) + 1
	s.green, s.dry, s.straw = make([]float64, n), make([]float64, n), make([]float64, n)
	if s.world != nil {
		s.residue, s.residueAge = make([]string, n), make([]int, n)
		s.canopyGreen, s.canopyDry = make([]Reflectance, n), make([]Reflectance, n)
	}
	straw := s.initStraw
	residue := Soja // crop whose residue dominates the ground
	age := 120      // days since that residue's harvest
	ti := 0
	for i := 0; i < n; i++ {
		d := s.Start.AddDate(0, 0, i)
		straw *= math.Exp(-math.Ln2 / s.halfLife[residue] * moisture[d.Month()-1])
		var green, dry float64
		var gSpec, dSpec Reflectance
		age++
		for _, c := range s.Cycles {
			if d.Before(c.Emergence) || !d.Before(c.Harvest) {
				if d.Equal(c.Harvest) {
					// The canopy becomes residue on the ground.
					straw += (1 - straw) * c.Yield
					if c.Yield > 0.3 {
						residue, age = c.Crop, 0
					}
				}
				continue
			}
			cover := canopyCover(c, d)
			gf := greenShare(c, d)
			green += cover * gf
			dry += cover * (1 - gf)
			if s.world != nil {
				gSpec = gSpec.add(s.world.green[c.Crop].scale(cover * gf))
				dSpec = dSpec.add(s.world.straw[c.Crop].scale(cover * (1 - gf)))
			}
		}
		if s.world != nil {
			s.residue[i], s.residueAge[i] = residue, min(age, ageHumifyMaxDays)
			s.canopyGreen[i], s.canopyDry[i] = s.world.green[Soja], s.world.straw[Soja]
			if green > 0 {
				s.canopyGreen[i] = gSpec.scale(1 / green)
			}
			if dry > 0 {
				s.canopyDry[i] = dSpec.scale(1 / dry)
			}
		}
		for ti < len(s.Tillage) && !s.Tillage[ti].Date.After(d) {
			if s.Tillage[ti].Date.Equal(d) {
				straw *= s.Tillage[ti].Retention
			}
			ti++
		}
		if tot := green + dry; tot > 1 {
			green, dry = green/tot, dry/tot
		}
		s.green[i], s.dry[i], s.straw[i] = green, dry, math.Min(1, straw)
	}
}

// canopyCover is the logistic rise of the canopy from emergence to its
// maximum at Peak (2 % → 98 % of MaxCover over that span).
func canopyCover(c Cycle, d time.Time) float64 {
	span := c.Peak.Sub(c.Emergence).Hours() / 24
	t := d.Sub(c.Emergence).Hours() / 24
	r := 8 / span
	return c.MaxCover / (1 + math.Exp(-r*(t-span/2)))
}

// greenShare is the green share of the canopy: 1 until Senesce, then down to
// 0 at Harvest (leaf yellowing and fall, or herbicide).
func greenShare(c Cycle, d time.Time) float64 {
	if d.Before(c.Senesce) {
		return 1
	}
	span := c.Harvest.Sub(c.Senesce).Hours() / 24
	t := d.Sub(c.Senesce).Hours() / 24
	return math.Max(0, 1-t/span)
}

// moisture scales residue decomposition by month (January first): microbial
// decomposition of crop residue in the Cerrado follows soil moisture and
// nearly stops in the dry season (May–September).
var moisture = [12]float64{1, 1, 1, 0.7, 0.35, 0.2, 0.15, 0.15, 0.3, 0.7, 1, 1}
