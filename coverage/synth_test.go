package coverage

import (
	"flag"
	"math/rand/v2"
	"time"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
)

var (
	accuracy      = flag.Bool("accuracy", false, "run the full accuracy harnesses (slow)")
	noReflectance = flag.Bool("noreflectance", false, "synthetic readings carry NDVI and NDTI only (the figures before the talhão soil fit)")
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// synthField is a talhão simulated by sim/pheno: one management
// history, nCells cells observed with their own noise and unflagged cloud
// residues under the scene's shared cloud mask.
type synthField struct {
	sc    *pheno.Scenario
	cells [][]Obs
}

// synthOptions shape a synthetic archive.
type synthOptions struct {
	start, end time.Time
	revisit    int // days between passes (5: Sentinel-2 A+B)
	nCells     int
	crop       string // pheno.Soja or pheno.Milho
	cloudScale float64
	spectra    pheno.Spectra // the world's spectra (zero: the reference world)
}

func newSynthField(rng *rand.Rand, o synthOptions) synthField {
	sc := pheno.Random(rng, o.start.AddDate(0, -6, 0), o.end, pheno.Options{MainCrop: o.crop, Spectra: o.spectra})
	dates := pheno.Revisit(o.start, o.end, o.revisit)
	return synthField{sc: sc, cells: observeCells(rng, sc, dates, o.nCells, o.cloudScale, pheno.ObsOptions{Noise: *obsNoise})}
}

// observeCells is nCells cells of sc seen on dates: the scene's cloud mask
// (cloudScale) shared by every cell, each cell with its own noise and
// unflagged residues (cell's Noise and ResidueProb; its CloudScale is
// ignored).
func observeCells(rng *rand.Rand, sc *pheno.Scenario, dates []time.Time, nCells int, cloudScale float64, cell pheno.ObsOptions) [][]Obs {
	// The scene's cloud mask: the same passes are cloudy over the whole talhão.
	mask := sc.Observe(rng, dates, pheno.ObsOptions{CloudScale: cloudScale, ResidueProb: -1})
	cell.CloudScale = 1e-9
	var cells [][]Obs
	for c := 0; c < nCells; c++ {
		obs := sc.Observe(rng, dates, cell)
		out := make([]Obs, len(obs))
		for i, ob := range obs {
			out[i] = Obs{Date: ob.Date, NDVI: ob.R.NDVI(), NDTI: ob.R.NDTI()}
			if !*noReflectance {
				out[i].Red, out[i].NIR, out[i].SWIR1, out[i].SWIR2 = ob.R.Red, ob.R.NIR, ob.R.SWIR1, ob.R.SWIR2
			}
			if mask[i].Cloud {
				out[i] = Obs{Date: ob.Date, NDVI: nan, NDTI: nan, Red: nan, NIR: nan, SWIR1: nan, SWIR2: nan}
			}
		}
		cells = append(cells, out)
	}
	return cells
}

// trueSowing returns the true sowing of the main crop in season s.
func (f synthField) trueSowing(s Season) (time.Time, bool) {
	for _, c := range f.sc.MainCycles() {
		if s.Contains(c.Sowing) {
			return zarc.Day(c.Sowing), true
		}
	}
	return time.Time{}, false
}

// obsNoise is the additive reflectance noise of the synthetic readings
// (pheno.ObsOptions.Noise; 0 = pheno's default 0.006). Diagnostics only:
// -obsnoise 1e-9 measures how far the design goes without it
// (docs/coverage.md).
var obsNoise = flag.Float64("obsnoise", 0, "additive reflectance noise of the synthetic readings (0 = pheno default 0.006; diagnostics)")

type timeT = time.Time

var (
	hardSeed     = flag.Uint64("hardseed", 20271, "held-out seed of the harder harness (TestAccuracyHarder)")
	hardTuneSeed = flag.Uint64("hardtune", 11, "tuning seed of the harder harness (TestHarderAccuracySmall)")
	hardN        = flag.Int("hardn", 300, "talhões of the held-out harder harness")
	hardTuneN    = flag.Int("hardtunen", 40, "talhões of the harder harness's tuning run (TestHarderAccuracySmall)")
	fixedStraw   = flag.Bool("fixedstraw", false, "harder harness: the reference straw given, no straw calibration (the estimator before issue 17)")
)
