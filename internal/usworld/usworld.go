// Package usworld draws an independent, real-like world of US Corn Belt
// maize fields under conventional tillage (CT) or no-till (NT), in the shape
// of the real set issue 30 keeps aside: 100 points per field, Landsat 7
// (SLC-off), Landsat 8 and Sentinel-2 readings from 1 November to about
// planting, four crop years, the summer crop in between left out.
//
// It was written from the literature and the description, NOT from
// package tillage or the project's other harness worlds: every parameter is
// drawn from a range taken from a cited source (see the comments of
// spectra.go, tillage.go, weather.go and sensors.go), and each real artifact
// can be switched off (Artifacts) to find which one a detector trips on.
//
// The package is pure (no I/O besides the io.Writer of WriteCSV) and is
// imported by tests only (cmd/manejo's usworld tests run the world through
// `manejo analyse`).
package usworld

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// Artifacts switches the world's real artifacts; AllArtifacts turns every
// one on. A field false removes that artifact alone (ablation).
type Artifacts struct {
	Snow             bool // snow episodes Dec–Mar, partly unflagged
	Offsets          bool // cross-sensor reflectance differences (L7/L8/S2)
	SLCOff           bool // Landsat 7 SLC-off stripes (per-point gaps)
	FallBeforeWindow bool // fall tillage before 1 November (else moved into November)
	Leaks            bool // thin cloud and shadow left in "clear" readings
	Moisture         bool // wet and thawing soil and residue
	SceneNoise       bool // per-scene atmospheric-correction residuals
	Clouds           bool // cloudy scenes masked (else every scene clear)
	Green            bool // spring weeds and cereal-rye cover crops
	Aging            bool // residue weathering over winter (NDTI of stover falls)
}

// AllArtifacts is the full world.
func AllArtifacts() Artifacts {
	return Artifacts{Snow: true, Offsets: true, SLCOff: true, FallBeforeWindow: true, Leaks: true,
		Moisture: true, SceneNoise: true, Clouds: true, Green: true, Aging: true}
}

// Config is one world.
type Config struct {
	Seed      uint64
	Fields    int     // fields drawn (default 120)
	CTShare   float64 // share of conventional-till fields (default 0.2, the real set's 7 of 34)
	Years     []int   // crop years, planting in spring of each (default 2016–2019)
	Points    int     // points per field, a square grid (default 100)
	Artifacts Artifacts
	// WideContrast draws fresh stover's SWIR2/SWIR1 over 0.54–0.76 (NDTI
	// 0.14–0.30, the upper half of the residue range Daughtry et al. 2005
	// report) instead of 0.64–0.76 (NDTI 0.14–0.22): a variant with a
	// wider residue–soil contrast (review s10 F8), same draws otherwise.
	WideContrast bool
}

func (c Config) withDefaults() Config {
	if c.Fields <= 0 {
		c.Fields = 120
	}
	if c.CTShare <= 0 {
		c.CTShare = 0.2
	}
	if len(c.Years) == 0 {
		c.Years = []int{2016, 2017, 2018, 2019}
	}
	if c.Points <= 0 {
		c.Points = 100
	}
	return c
}

// World is a drawn set of fields.
type World struct {
	Config Config
	Fields []Field
}

// Field is one maize field: its label, tillage system and crop years.
type Field struct {
	ID     string
	CT     bool
	System string // CT: the tillage system (systems in tillage.go); NT: "no-till"
	Lon    []float64
	Lat    []float64
	Years  []FieldYear
	// SoilNDTI is the truth of the field's dry soil NDTI (before moisture,
	// sensors and noise; the points' brightness factors leave it as is),
	// for oracle diagnostics.
	SoilNDTI float64
}

// FieldYear is one window, 1 November before the crop year to about
// planting, with its truth and its clear readings.
type FieldYear struct {
	CropYear                      int
	Start, Harvest, Planting, End time.Time
	Passes                        []Pass
	// CoverAtPlanting is the field-mean residue cover (0..1) on the
	// planting day.
	CoverAtPlanting float64
	// WindowDrop is the tillage signal the window holds: the field-median
	// NDTI of the bare, dry, snow-free surface (no noise, no sensor) the
	// day before the first pass inside the window minus on its last day; 0
	// when no pass falls inside it.
	WindowDrop float64
	Readings   []Reading
}

// Pass is one tillage operation.
type Pass struct {
	Date      time.Time
	Implement string
	Retain    float64 // share of the surface residue cover left
	// Drop is the pass's own signal: the field-median NDTI of the bare,
	// dry, snow-free surface the day before it minus the day after.
	Drop float64
}

// InWindow reports whether a tillage pass falls inside the window
// (Start, End], so that readings can see it.
func (fy FieldYear) InWindow() bool {
	for _, p := range fy.Passes {
		if p.Date.After(fy.Start) && !p.Date.After(fy.End) {
			return true
		}
	}
	return false
}

// Reading is one clear (unmasked) surface-reflectance reading of a point.
type Reading struct {
	Day                      int32 // days since 1970-01-01
	Point                    int16
	Sensor                   Sensor
	Red, NIR, SWIR16, SWIR22 float32
}

// ByPoint returns the field-year's readings by point number, each point's
// by date (as the analyse table reader orders a point's series); a point
// with no reading has none.
func (fy FieldYear) ByPoint() [][]Reading {
	var by [][]Reading
	for _, r := range fy.Readings {
		for int(r.Point) >= len(by) {
			by = append(by, nil)
		}
		by[r.Point] = append(by[r.Point], r)
	}
	for _, rs := range by {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Day < rs[j].Day })
	}
	return by
}

// Date is the reading's UTC day.
func (r Reading) Date() time.Time { return time.Unix(int64(r.Day)*86400, 0).UTC() }

// NDVI and NDTI of the reading, as the analyse table reader computes them.
func (r Reading) NDVI() float64 {
	return (float64(r.NIR) - float64(r.Red)) / (float64(r.NIR) + float64(r.Red))
}

// NDTI is (SWIR1 − SWIR2)/(SWIR1 + SWIR2) (van Deventer et al. 1997).
func (r Reading) NDTI() float64 {
	return (float64(r.SWIR16) - float64(r.SWIR22)) / (float64(r.SWIR16) + float64(r.SWIR22))
}

// Generate draws a world. The same Config gives the same world.
func Generate(cfg Config) World {
	cfg = cfg.withDefaults()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x0757a1d))
	cal := drawCalibration(rng, cfg.Artifacts.Offsets)
	w := World{Config: cfg}
	nCT := int(math.Round(cfg.CTShare * float64(cfg.Fields)))
	for i := range cfg.Fields {
		frng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1))
		w.Fields = append(w.Fields, drawField(frng, cfg, cal, i, i < nCT))
	}
	return w
}

func drawField(rng *rand.Rand, cfg Config, cal calibration, i int, ct bool) Field {
	f := Field{ID: fmt.Sprintf("US%03d", i), CT: ct, System: "no-till"}
	lat0, lon0 := uniform(rng, 39.5, 44.0), uniform(rng, -96.5, -86.0) // Iowa, Illinois, Indiana, S. Minnesota, E. Nebraska
	side := int(math.Round(math.Sqrt(float64(cfg.Points))))
	step := uniform(rng, 50, 75) // m between points: 25–55 ha fields
	for p := range cfg.Points {
		x, y := float64(p%side)*step, float64(p/side)*step
		f.Lon = append(f.Lon, lon0+x/(111320*math.Cos(lat0*math.Pi/180)))
		f.Lat = append(f.Lat, lat0+y/110540)
	}
	site := drawSite(rng, cfg, lat0, side, step)
	f.SoilNDTI = ndti(site.soil)
	if ct {
		f.System = drawSystem(rng)
	}
	for _, y := range cfg.Years {
		f.Years = append(f.Years, simulateYear(rng, cfg, cal, site, f.System, y))
	}
	return f
}

func uniform(rng *rand.Rand, a, b float64) float64 { return a + (b-a)*rng.Float64() }

func day(t time.Time) int32 { return int32(t.Unix() / 86400) }

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }
