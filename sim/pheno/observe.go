package pheno

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/manejo/manejo/zarc"
)

// Obs is one satellite observation of a scenario.
type Obs struct {
	Date time.Time
	R    Reflectance // observed reflectance, with noise (and cloud if any)
	// Cloud is true when the pixel is cloudy or shadowed and the cloud mask
	// flags it: the observation is unusable and known to be so.
	Cloud bool
	// Residue is true when the pixel is contaminated by thin cloud, haze or
	// shadow that the mask missed: R is wrong and nothing says so.
	Residue bool
}

// Valid reports whether the observation passed the cloud mask.
func (o Obs) Valid() bool { return !o.Cloud }

// ObsOptions shape Observe. The zero value means the defaults.
type ObsOptions struct {
	// CloudScale multiplies the monthly cloud probabilities of Mato Grosso
	// (≈ 0.75 in the rainy months, ≈ 0.1 in the dry season; about 45 % of
	// observations lost over a year). Default 1.
	CloudScale float64
	// ResidueProb is the chance that a clear-looking observation carries
	// unflagged cloud or shadow. Default 0.03; negative = none.
	ResidueProb float64
	// Noise is the standard deviation of the additive reflectance noise
	// (default 0.006), on top of a 2 % multiplicative term.
	Noise float64
}

// cloudByMonth is the chance that a Sentinel-2 pass over central Mato Grosso
// is cloudy, January first.
var cloudByMonth = [12]float64{0.75, 0.75, 0.70, 0.50, 0.25, 0.10, 0.08, 0.10, 0.25, 0.50, 0.65, 0.75}

// CloudProb returns the default chance that a pass on d is cloudy.
func CloudProb(d time.Time) float64 { return cloudByMonth[d.Month()-1] }

// Revisit returns the pass dates from start to end, every days days.
func Revisit(start, end time.Time, days int) []time.Time {
	var out []time.Time
	for d := zarc.Day(start); !d.After(zarc.Day(end)); d = d.AddDate(0, 0, days) {
		out = append(out, d)
	}
	return out
}

// Observe returns what a satellite sees of s on each date: reflectance with
// noise, flagged clouds, and a few unflagged cloud or shadow residues.
func (s *Scenario) Observe(rng *rand.Rand, dates []time.Time, o ObsOptions) []Obs {
	if o.CloudScale == 0 {
		o.CloudScale = 1
	}
	if o.ResidueProb == 0 {
		o.ResidueProb = 0.03
	}
	if o.Noise == 0 {
		o.Noise = 0.006
	}
	out := make([]Obs, len(dates))
	for i, d := range dates {
		r := s.Reflectance(d)
		k := 1 + 0.02*rng.NormFloat64()
		r = Reflectance{
			Red:   math.Max(0.001, r.Red*k+o.Noise*rng.NormFloat64()),
			NIR:   math.Max(0.001, r.NIR*k+o.Noise*rng.NormFloat64()),
			SWIR1: math.Max(0.001, r.SWIR1*k+o.Noise*rng.NormFloat64()),
			SWIR2: math.Max(0.001, r.SWIR2*k+o.Noise*rng.NormFloat64()),
		}
		obs := Obs{Date: zarc.Day(d), R: r}
		// In the varied world a rainy day's pass is cloudy; the other
		// days' cloud chance is lowered so the month's cloud loss stays
		// CloudProb.
		pc := math.Min(0.98, CloudProb(d)*o.CloudScale)
		rain := s.rained(d)
		if r := rainByMonth[d.Month()-1]; s.world != nil && pc > r {
			pc = (pc - r) / (1 - r)
		}
		switch {
		case rng.Float64() < pc || rain:
			obs.Cloud = true
			obs.R = Cloudy(rng, r)
		case o.ResidueProb > 0 && rng.Float64() < o.ResidueProb:
			obs.Residue = true
			obs.R = Cloudy(rng, r)
		}
		out[i] = obs
	}
	return out
}

// cloudTop is the reflectance of a thick cloud top.
var cloudTop = Reflectance{Red: 0.45, NIR: 0.48, SWIR1: 0.38, SWIR2: 0.28}

// Cloudy returns r seen through thin cloud or haze (brighter, flatter
// spectrum) or in a cloud shadow (darker), at random.
func Cloudy(rng *rand.Rand, r Reflectance) Reflectance {
	if rng.Float64() < 0.35 {
		return r.scale(uniform(rng, 0.35, 0.7)) // shadow
	}
	a := uniform(rng, 0.25, 0.8)
	return r.scale(1 - a).add(cloudTop.scale(a))
}
