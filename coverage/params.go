package coverage

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/manejo/manejo/grid"
)

// Params tunes detection and cover. A zero field takes the default given in
// its comment (see docs/coverage.md for the sources), so Params{} is the
// documented configuration.
type Params struct {
	// Smoothing of the talhão NDVI series.
	Lambda     float64 // Whittaker λ on a daily grid; default 50 (half-power period ≈ 17 days)
	RobustIter int     // robust re-weighting passes; default 4

	// Crop cycles.
	MinAmplitude float64 // minimum rise and fall of NDVI around a cycle's peak; default 0.2
	MinPeak      float64 // minimum smoothed NDVI at a cycle's peak; default 0.45
	GreenUp      Ratio   // start/end of a cycle at this fraction of its amplitude; default 0.3
	MinCycleDays int     // minimum days from green-up to senescence of a cycle; default 60

	// Sowing detection.
	// LagDays is, by crop, the days from sowing to the green-up crossing
	// at GreenUp: emergence (5–10 days, ZARC) plus the days the young canopy
	// takes to lift NDVI over the threshold. Defaults (calibrated for
	// GreenUp 0.3, docs/coverage.md): soja 26, milho 30. Set it again when
	// changing GreenUp.
	LagDays map[grid.Crop]float64
	// Windows are the plausible sowing windows of the main crop, as first
	// and last month-day within the agricultural year; defaults: soja
	// 09-15..12-31, milho 09-01..12-31.
	Windows map[grid.Crop][2]MonthDay
	// WindowSlackDays is how far outside its window a detected sowing may
	// fall and still be taken (clamped to the window, with lower
	// confidence); default 15.
	WindowSlackDays int

	// Straw cover.
	WindowDays int     // days read before sowing; default 30 (Portaria 349/2026 item 6.7.2)
	MaxNDVI    float64 // readings with NDVI at or above this are green vegetation and dropped; default 0.3
	BareNDTI   float64 // NDTI of bare soil, 0 % straw; default 0.055
	StrawNDTI  float64 // NDTI of full dry straw, 100 %; default 0.246
	// Estimator picks the per-cell NDTI from the window's readings:
	// "median" (default), "min" (Zheng et al. 2012) or "mean". The minimum
	// rejects green weeds but is biased low by noise (docs/coverage.md).
	Estimator string
}

// Default values of Params.
const (
	DefaultLambda       = 50
	DefaultRobustIter   = 4
	DefaultMinCycleDays = 60
	DefaultMinAmplitude = 0.2
	DefaultMinPeak      = 0.45
	DefaultGreenUp      = 0.3
	DefaultSlackDays    = 15
	DefaultWindowDays   = 30
	DefaultMaxNDVI      = 0.3
	DefaultBareNDTI     = 0.055
	DefaultStrawNDTI    = 0.246
)

// DefaultLagDays are the default LagDays.
var DefaultLagDays = map[grid.Crop]float64{grid.Soja: 26, grid.Milho: 30}

// lag returns the sowing-to-green-up lag of crop, in days.
func (p Params) lag(crop grid.Crop) float64 {
	if v, ok := p.LagDays[crop]; ok {
		return v
	}
	if v, ok := DefaultLagDays[crop]; ok {
		return v
	}
	return DefaultLagDays[grid.Soja]
}

// DefaultWindows are the plausible sowing windows of the main (summer) crop
// in Mato Grosso and Paraná: soybean from the end of the sanitary break
// (mid-September) to the end of December, summer maize from September.
var DefaultWindows = map[grid.Crop][2]MonthDay{
	grid.Soja:  {{time.September, 15}, {time.December, 31}},
	grid.Milho: {{time.September, 1}, {time.December, 31}},
}

func (p Params) withDefaults() Params {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&p.Lambda, DefaultLambda)
	def(&p.MinAmplitude, DefaultMinAmplitude)
	def(&p.MinPeak, DefaultMinPeak)
	def(&p.MaxNDVI, DefaultMaxNDVI)
	def(&p.BareNDTI, DefaultBareNDTI)
	def(&p.StrawNDTI, DefaultStrawNDTI)
	if p.GreenUp == 0 {
		p.GreenUp = DefaultGreenUp
	}
	if p.MinCycleDays == 0 {
		p.MinCycleDays = DefaultMinCycleDays
	}
	if p.RobustIter == 0 {
		p.RobustIter = DefaultRobustIter
	}
	if p.WindowSlackDays == 0 {
		p.WindowSlackDays = DefaultSlackDays
	}
	if p.WindowDays == 0 {
		p.WindowDays = DefaultWindowDays
	}
	if p.Estimator == "" {
		p.Estimator = "median"
	}
	return p
}

// window returns the sowing window of crop in season s, first and last day
// included. Month-days before the season's start month-day fall in its
// second calendar year.
func (p Params) window(crop grid.Crop, s Season) (time.Time, time.Time) {
	w, ok := p.Windows[crop]
	if !ok {
		w, ok = DefaultWindows[crop]
	}
	if !ok {
		w = DefaultWindows[grid.Soja]
	}
	at := func(md MonthDay) time.Time {
		t := md.In(s.Start.Year())
		if t.Before(s.Start) {
			t = md.In(s.Start.Year() + 1)
		}
		return t
	}
	return at(w[0]), at(w[1])
}

// ErrParams reports an invalid Params field.
var ErrParams = errors.New("coverage: bad parameters")

// Validate checks p (after defaults) and returns an error wrapping ErrParams
// that names the first bad field. Assess reports C missing with this error
// as the reason; callers should validate once, when they build p.
func (p Params) Validate() error {
	p = p.withDefaults()
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrParams}, a...)...)
	}
	switch {
	case !(p.Lambda > 0) || math.IsInf(p.Lambda, 0):
		return bad("Lambda %v must be positive", p.Lambda)
	case p.RobustIter < 0:
		return bad("RobustIter %d must be ≥ 0", p.RobustIter)
	case !(p.MinAmplitude > 0):
		return bad("MinAmplitude %v must be positive", p.MinAmplitude)
	case !(p.GreenUp > 0 && p.GreenUp < 1):
		return bad("GreenUp %v must be in (0, 1)", p.GreenUp)
	case p.MinCycleDays < 0 || p.WindowSlackDays < 0:
		return bad("MinCycleDays %d and WindowSlackDays %d must be ≥ 0", p.MinCycleDays, p.WindowSlackDays)
	case p.WindowDays < 1:
		return bad("WindowDays %d must be ≥ 1", p.WindowDays)
	case !(p.MaxNDVI > -1 && p.MaxNDVI <= 1):
		return bad("MaxNDVI %v must be in (−1, 1]", p.MaxNDVI)
	case !(p.StrawNDTI > p.BareNDTI):
		return bad("StrawNDTI %v must exceed BareNDTI %v", p.StrawNDTI, p.BareNDTI)
	case p.Estimator != "median" && p.Estimator != "min" && p.Estimator != "mean":
		return bad("Estimator %q, want median, min or mean", p.Estimator)
	}
	for c, v := range p.LagDays {
		if !(v >= 0 && v < 120) {
			return bad("LagDays[%s] %v must be in [0, 120)", c, v)
		}
	}
	for c, w := range p.Windows {
		for _, md := range w {
			if err := md.valid(); err != nil {
				return bad("Windows[%s] %s: %v", c, md, err)
			}
		}
	}
	return nil
}
