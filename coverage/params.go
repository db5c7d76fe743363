package coverage

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"time"

	"github.com/manejo/manejo/spectral"
	"github.com/manejo/manejo/zarc"
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
	// GreenUp 0.3, docs/coverage.md: the mean lag, so that detected dates
	// are unbiased): soja 25.7, milho 29.6. Set it again when changing
	// GreenUp.
	LagDays map[zarc.Crop]float64
	// Windows are the plausible sowing windows of the main crop, as first
	// and last month-day within the agricultural year; defaults: soja
	// 09-15..12-31, milho 09-01..12-31.
	Windows map[zarc.Crop][2]MonthDay
	// WindowSlackDays is how far outside its window a detected sowing may
	// fall and still be taken (clamped to the window, with lower
	// confidence); default 15.
	WindowSlackDays int

	// Straw cover.
	WindowDays int // days read before sowing; default 30 (Portaria 349/2026 item 6.7.2)
	// MaxNDVI: readings with NDVI at or above this are green vegetation
	// and dropped; default 0.3 with the NDTI estimators, 0.5 with EstimatorUnmix
	// (which unmixes the green share of a reading instead).
	MaxNDVI float64
	// BareNDTI and StrawNDTI are the NDTI of bare soil (0 % straw) and of
	// full dry straw (100 %). With the NDTI estimators they default to
	// 0.055 and 0.246 (fitted, docs/coverage.md); with EstimatorUnmix, when set,
	// they replace the Soil and Straw endmembers' NDTI (defaults 0.053 and
	// 0.241, the spectra). Left zero with EstimatorUnmix (and Soil, Straw
	// zero, the soil fit on), the talhão calibrates itself: its soil
	// (spectral.FieldSoil), each season's straw from its dry-residue
	// envelope, its wet dates, and the seasons' and C's 90 % intervals
	// (docs/coverage.md); setting any of them turns that off and the
	// intervals are the cells' sampling error only.
	BareNDTI  float64
	StrawNDTI float64
	// Estimator picks how a cell's readings become its cover; zero is
	// EstimatorUnmix.
	Estimator Estimator

	// Unmixing (EstimatorUnmix). Green, Straw and Soil are the
	// endmembers each reading is unmixed into; zero values take
	// spectral.Green, spectral.Straw and spectral.Soil, with the soil and straw
	// NDTI replaced by BareNDTI and StrawNDTI when those are set.
	Green, Straw, Soil spectral.Endmember
	// Outside is how far (fraction units) a reading may lie outside the
	// endmember triangle before it is taken as unflagged haze or water and
	// dropped; default 0.2.
	Outside float64
	// AnchorDays: readings up to this many days before the window anchor
	// the time interpolation at the window's start (never counted as the
	// window's readings); default 15, negative = none.
	AnchorDays int
	// SowAnchorDays: the first clear date within this many days after
	// sowing anchors the window's end at the sowing day (the ground the
	// seeder left, read around the emerging canopy; never counted as the
	// window's readings); default 30, negative = none.
	SowAnchorDays int
	// HazeGreen: a reading whose green fraction, unmixed with the
	// endmembers' own NDVIs (spectral.New; the dry line of the straw cover
	// never gives a negative green), is below −HazeGreen is taken as
	// unflagged haze (haze flattens the spectrum and lowers NDVI
	// below the soil–straw line; unmixed, it would read as extra straw,
	// since green canopy has the highest NDTI) and dropped; default 0.08,
	// about twice the green-fraction noise of a Sentinel-2 reading.
	HazeGreen float64
	// NoSoilFit turns off the talhão soil fit. By default, with EstimatorUnmix,
	// when at least MinSoilFitObs readings of the talhão carry all four
	// reflectances (Obs.Red..SWIR2) and neither Soil nor BareNDTI is set,
	// Assess replaces the Soil endmember by the talhão's own soil, fitted
	// from those reflectances (spectral.FitSoil: spectral.SoilSpectrum scaled in
	// brightness and in SWIR1; docs/coverage.md).
	NoSoilFit bool

	// skip holds the talhão's wet dates (calibrate), not read when the
	// window has another date.
	skip map[time.Time]bool
	// templates is set by calibrate when the talhão's readings are
	// mixtures of the reference green and straw and its fitted soil to
	// within reading noise (referenceMisfit): their straw–soil NDVI
	// difference is then the templates', and newUnmixer reads with it.
	templates bool
	// fewReadings is set by calibrate when the talhão has fewer than
	// MinSoilFitObs readings below MaxNDVI: they say nothing of its dry
	// surfaces' NDVI, and newUnmixer raises the dry line to
	// fewReadingsDryNDVI.
	fewReadings bool
}

// Estimator names how CellCover turns a cell's readings into its straw
// cover. The zero value is EstimatorUnmix.
type Estimator string

// The estimators. The minimum rejects green weeds but is biased low by
// noise (docs/coverage.md).
const (
	// EstimatorUnmix unmixes each reading into green, straw and soil and
	// averages the straw fraction over the window's days (see unmixCover).
	EstimatorUnmix Estimator = "unmix"
	// EstimatorMedian, EstimatorMin (Zheng et al. 2012) and EstimatorMean
	// map that NDTI of the window's readings linearly between BareNDTI and
	// StrawNDTI.
	EstimatorMedian Estimator = "median"
	EstimatorMin    Estimator = "min"
	EstimatorMean   Estimator = "mean"
)

// ParseEstimator reads an estimator name: unmix, median, min or mean (""
// is the zero value, EstimatorUnmix). The error wraps ErrParams.
func ParseEstimator(s string) (Estimator, error) {
	e := Estimator(s)
	if !e.valid() {
		return "", fmt.Errorf("%w: Estimator %q, want unmix, median, min or mean", ErrParams, s)
	}
	return e, nil
}

func (e Estimator) valid() bool {
	switch e {
	case "", EstimatorUnmix, EstimatorMedian, EstimatorMin, EstimatorMean:
		return true
	}
	return false
}

// unmixes reports whether e is the unmixing estimator (the zero value too).
func (e Estimator) unmixes() bool { return e == "" || e == EstimatorUnmix }

// MinSoilFitObs is the number of readings with all four reflectances, NDVI
// below MaxNDVI, that the talhão soil fit needs.
const MinSoilFitObs = 30

// Default values of Params.
const (
	defaultLambda       = 50
	defaultRobustIter   = 4
	defaultMinCycleDays = 60
	defaultMinAmplitude = 0.2
	defaultMinPeak      = 0.45
	defaultGreenUp      = 0.3
	defaultSlackDays    = 15
	defaultWindowDays   = 30
	defaultMaxNDVI      = 0.3 // NDTI estimators
	// defaultUnmixMaxNDVI is the MaxNDVI of the unmixing estimator: green
	// canopy is unmixed, so only readings mostly green are dropped.
	defaultUnmixMaxNDVI = 0.5
	defaultBareNDTI     = 0.055
	defaultStrawNDTI    = 0.246
	defaultOutside      = 0.2
	defaultAnchorDays   = 15
	defaultSowAnchor    = 30
	defaultHazeGreen    = 0.08
)

// defaultLagDays are the default LagDays (the crop table's).
var defaultLagDays = cropLags()

// lag returns the sowing-to-green-up lag of crop, in days.
func (p Params) lag(crop zarc.Crop) float64 {
	if v, ok := p.LagDays[crop]; ok {
		return v
	}
	if v, ok := defaultLagDays[crop]; ok {
		return v
	}
	return defaultLagDays[zarc.Soja]
}

// defaultWindows are the plausible sowing windows of the main crop (the
// crop table's): soybean from the end of the sanitary break (mid-September)
// to the end of December, summer maize from September, and the others of
// the table (docs/coverage.md "Crops").
var defaultWindows = cropWindows()

func (p Params) withDefaults() Params {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&p.Lambda, defaultLambda)
	def(&p.MinAmplitude, defaultMinAmplitude)
	def(&p.MinPeak, defaultMinPeak)
	if p.Soil == (spectral.Endmember{}) {
		p.Soil = spectral.Soil
		if p.BareNDTI != 0 {
			p.Soil.NDTI = p.BareNDTI
		}
	}
	if p.Straw == (spectral.Endmember{}) {
		p.Straw = spectral.Straw
		if p.StrawNDTI != 0 {
			p.Straw.NDTI = p.StrawNDTI
		}
	}
	if p.Green == (spectral.Endmember{}) {
		p.Green = spectral.Green
	}
	def(&p.Outside, defaultOutside)
	def(&p.HazeGreen, defaultHazeGreen)
	// Anchor spans: 0 takes the default, negative means none.
	days := func(v *int, d int) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = 0
		}
	}
	days(&p.AnchorDays, defaultAnchorDays)
	days(&p.SowAnchorDays, defaultSowAnchor)
	if p.Estimator == "" {
		p.Estimator = EstimatorUnmix
	}
	if p.Estimator == EstimatorUnmix {
		def(&p.MaxNDVI, defaultUnmixMaxNDVI)
	}
	def(&p.MaxNDVI, defaultMaxNDVI)
	def(&p.BareNDTI, defaultBareNDTI)
	def(&p.StrawNDTI, defaultStrawNDTI)
	if p.GreenUp == 0 {
		p.GreenUp = defaultGreenUp
	}
	if p.MinCycleDays == 0 {
		p.MinCycleDays = defaultMinCycleDays
	}
	if p.RobustIter == 0 {
		p.RobustIter = defaultRobustIter
	}
	if p.WindowSlackDays == 0 {
		p.WindowSlackDays = defaultSlackDays
	}
	if p.WindowDays == 0 {
		p.WindowDays = defaultWindowDays
	}
	return p
}

// Effective returns p with every default applied: the values Assess works
// with, for the run manifest, where a zero field would read as zero rather
// than as "the default". LagDays and Windows list every crop with a default
// besides those p sets. A negative AnchorDays or SowAnchorDays (none) stays
// negative, so p.Effective() configures Assess exactly as p does. The soil
// fit (NoSoilFit false) still replaces Soil per talhão.
func (p Params) Effective() Params {
	e := p.withDefaults()
	if p.AnchorDays < 0 {
		e.AnchorDays = p.AnchorDays
	}
	if p.SowAnchorDays < 0 {
		e.SowAnchorDays = p.SowAnchorDays
	}
	e.LagDays = maps.Clone(defaultLagDays)
	maps.Copy(e.LagDays, p.LagDays)
	e.Windows = maps.Clone(defaultWindows)
	maps.Copy(e.Windows, p.Windows)
	return e
}

// window returns the sowing window of crop in season s, first and last day
// included. Month-days before the season's start month-day fall in its
// second calendar year.
func (p Params) window(crop zarc.Crop, s Season) (time.Time, time.Time) {
	w, ok := p.Windows[crop]
	if !ok {
		w, ok = defaultWindows[crop]
	}
	if !ok {
		w = defaultWindows[zarc.Soja]
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
	case !p.Estimator.valid():
		return bad("Estimator %q, want unmix, median, min or mean", p.Estimator)
	case !(p.Outside >= 0) || !(p.HazeGreen >= 0):
		return bad("Outside %v and HazeGreen %v must be ≥ 0", p.Outside, p.HazeGreen)
	}
	if p.Estimator == EstimatorUnmix {
		if _, ok := newUnmixer(p); !ok {
			return bad("Green %+v, Straw %+v, Soil %+v: endmembers need finite indices, positive VNIR and SWIR, and must not be collinear in (NDVI, NDTI), nor straw and soil share their NDTI", p.Green, p.Straw, p.Soil)
		}
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
