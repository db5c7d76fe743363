package coverage

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
)

// accuracyResult gathers the harness figures.
type accuracyResult struct {
	fields, seasons         int
	sowN, sowMissed         int
	sowAbs                  float64 // sum of |detected − true| days
	sowBias                 float64 // sum of detected − true, days
	coverN                  int
	coverAbs, coverBias     float64 // percentage points
	declCoverN              int
	declCoverAbs            float64 // cover error with the true sowing declared
	cOK, levelAgree         int
	levelFar                int     // disagreements by more than one level
	cAbs                    float64 // sum of |C − true C|, percentage points
	levelAgreeDecl, cOKDecl int
}

func (r accuracyResult) sowMAE() float64    { return r.sowAbs / float64(r.sowN) }
func (r accuracyResult) coverMAE() float64  { return r.coverAbs / float64(r.coverN) }
func (r accuracyResult) agreement() float64 { return float64(r.levelAgree) / float64(r.cOK) }

// runAccuracy simulates n talhões of nCells cells each (Sentinel-2 revisit,
// Mato Grosso clouds, unflagged residues) from pheno, 80 % soybean and 20 %
// summer maize, and assesses C for contract year 2026/2027 twice: with
// detected sowing dates and with the true ones declared.
func runAccuracy(t testing.TB, n, nCells int, seed uint64) accuracyResult {
	rng := rand.New(rand.NewPCG(seed, 2027))
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	var r accuracyResult
	for k := 0; k < n; k++ {
		crop := pheno.Soja
		if rng.Float64() < 0.2 {
			crop = pheno.Milho
		}
		f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: nCells, crop: crop, cloudScale: 1})
		declared := map[string]Declared{}
		truthSum := 0.0
		truths := map[string]float64{}
		sows := map[string]float64{}
		for _, s := range contract.Assessed() {
			sow, ok := f.trueSowing(s)
			if !ok {
				t.Fatalf("field %d: no main crop sown in %s", k, s.Label)
			}
			declared[s.Label] = Declared{Season: s.Label, Date: sow}
			tr := f.sc.StrawPct(sow.AddDate(0, 0, -30), sow)
			truths[s.Label] = tr
			truthSum += tr
			sows[s.Label] = float64(sow.Unix()) / 86400
		}
		truthLevel := zarc.CLevel(truthSum / 3)
		r.fields++
		got := Assess(f.cells, contract, nil, zarc.Crop(crop), testParams())
		for _, sc := range got.Seasons {
			r.seasons++
			if sc.Sowing.Date.IsZero() {
				r.sowMissed++
				continue
			}
			r.sowN++
			e := float64(sc.Sowing.Date.Unix())/86400 - sows[sc.Season.Label]
			r.sowAbs += math.Abs(e)
			r.sowBias += e
			if sc.OK {
				e := sc.CoverPct - truths[sc.Season.Label]
				r.coverN++
				r.coverAbs += math.Abs(e)
				r.coverBias += e
			}
		}
		if got.OK {
			r.cOK++
			r.cAbs += math.Abs(got.Pct - truthSum/3)
			switch d := got.Level - truthLevel; {
			case d == 0:
				r.levelAgree++
			case d > 1 || d < -1:
				r.levelFar++
			}
		}
		decl := Assess(f.cells, contract, declared, zarc.Crop(crop), testParams())
		for _, sc := range decl.Seasons {
			if sc.OK {
				r.declCoverN++
				r.declCoverAbs += math.Abs(sc.CoverPct - truths[sc.Season.Label])
			}
		}
		if decl.OK {
			r.cOKDecl++
			if decl.Level == truthLevel {
				r.levelAgreeDecl++
			}
		}
	}
	return r
}

// checkAccuracy asserts the targets of issue 10. strictLevel makes the
// level-agreement target (≥ 95 %) an error, otherwise it is only logged
// (the -estimator median and -noreflectance runs do not meet it:
// docs/coverage.md). With the talhão soil fit from the readings'
// reflectances and the post-sowing anchor the full harness reached 96.1 %
// on its report seed (95.1 % pooled over seven seeds, 93.4–96.1 % per
// seed: docs/coverage.md), the always-on one 95.9 %; with the dry line
// (spectral.NewDry) 95.0 % and 95.2 %.
func checkAccuracy(t *testing.T, r accuracyResult, strictLevel bool) {
	t.Logf("talhões %d, seasons %d", r.fields, r.seasons)
	t.Logf("sowing detected in %d of %d seasons (%.1f %%); MAE %.2f days (target ≤ 7), bias %+.2f days",
		r.sowN, r.seasons, 100*float64(r.sowN)/float64(r.seasons), r.sowMAE(), r.sowBias/float64(r.sowN))
	t.Logf("straw cover (detected sowing): %d seasons read, MAE %.2f pp (target ≤ 5), bias %+.2f pp",
		r.coverN, r.coverMAE(), r.coverBias/float64(r.coverN))
	t.Logf("straw cover (true sowing declared): %d seasons read, MAE %.2f pp", r.declCoverN, r.declCoverAbs/float64(r.declCoverN))
	t.Logf("C level agreement (detected sowing): %d of %d talhões with C (%.1f %%; target ≥ 95 %%); C missing for %d",
		r.levelAgree, r.cOK, 100*r.agreement(), r.fields-r.cOK)
	t.Logf("C (mean of 3 seasons): MAE %.2f pp; disagreements by more than one level: %d", r.cAbs/float64(r.cOK), r.levelFar)
	t.Logf("C level agreement (declared sowing): %d of %d (%.1f %%)", r.levelAgreeDecl, r.cOKDecl, 100*float64(r.levelAgreeDecl)/float64(r.cOKDecl))
	if r.sowMAE() > 7 {
		t.Errorf("sowing MAE %.2f days > 7", r.sowMAE())
	}
	if r.coverMAE() > 5 {
		t.Errorf("straw cover MAE %.2f pp > 5", r.coverMAE())
	}
	if r.agreement() < 0.95 {
		if strictLevel {
			t.Errorf("level agreement %.3f < 0.95", r.agreement())
		} else {
			t.Logf("TARGET NOT MET: level agreement %.3f < 0.95 (see docs/coverage.md)", r.agreement())
		}
	}
	if float64(r.sowN) < 0.9*float64(r.seasons) {
		t.Errorf("sowing found in only %d of %d seasons", r.sowN, r.seasons)
	}
}

// TestAccuracySmall is the always-on version of the harness.
func TestAccuracySmall(t *testing.T) {
	// Independent of the other tests (its own worlds, flags only read):
	// under make test it overlaps the package's other long harnesses.
	t.Parallel()
	n := 150
	if testing.Short() {
		n = 15
	}
	// The default configuration (unmixing with the talhão soil fit) must
	// meet all three targets of issue 10 here: 150 talhões give cover MAE
	// 2.18 pp and level agreement 138 / 145 = 95.2 % (138 needed; 2.36 pp
	// and 139 before the dry line, spectral.NewDry). Without
	// the soil fit (-noreflectance) they gave 3.03 pp and 92.4 %, with the
	// median NDTI 4.0 pp and 86 %.
	def := accEstimator == "" && !*noReflectance && !testing.Short()
	r := runAccuracy(t, n, 8, 1)
	checkAccuracy(t, r, def)
	// Regression guard of the unmixing with the soil fit.
	if def && r.coverMAE() > 3 {
		t.Errorf("unmixing regressed: straw cover MAE %.2f pp > 3", r.coverMAE())
	}
}

// TestAccuracyFull is the full harness (make accuracy).
func TestAccuracyFull(t *testing.T) {
	if !*accuracy {
		t.Skip("full harness: run with -accuracy (make accuracy)")
	}
	checkAccuracy(t, runAccuracy(t, 400, 12, *accSeed), true)
}

var (
	accSeed = flag.Uint64("accseed", 20261, "seed of the full harness (TestAccuracyFull)")
)

// accEstimator is Params.Estimator of the harnesses (-estimator).
var accEstimator Estimator

func init() {
	flag.Func("estimator", "Params.Estimator of the harnesses: unmix, median, min or mean (default: the package default, unmix); median reproduces the figures before unmixing", func(s string) (err error) {
		accEstimator, err = ParseEstimator(s)
		return err
	})
}

func testParams() Params { return Params{Estimator: accEstimator} }

// TestAccuracyCeiling measures the level agreement a perfect reader would
// reach with this measurement design: noise-free, cloud-free readings every
// day of each window (true sowing) and the harness's Params (-estimator).
// It shows how much of the level disagreement comes from the estimator
// itself (with the unmixing: soil brightness varying ±3 % in SWIR1 between
// fields; with the median NDTI also green weeds and the non-linear NDTI of
// a mixture) rather than from clouds, noise or sowing detection: 97.3 %
// with the unmixing, 93.0 % with the median NDTI. Runs with -accuracy.
func TestAccuracyCeiling(t *testing.T) {
	if !*accuracy {
		t.Skip("ceiling: run with -accuracy")
	}
	rng := rand.New(rand.NewPCG(23, 29))
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	agree, n := 0, 0
	var absErr float64
	for k := 0; k < 300; k++ {
		sc := pheno.Random(rng, day("2022-01-01"), day("2026-07-31"), pheno.Options{})
		f := synthField{sc: sc}
		var tsum, esum float64
		for _, s := range contract.Assessed() {
			sow, _ := f.trueSowing(s)
			var all []Obs
			for d := sow.AddDate(0, 0, -30); d.Before(sow); d = d.AddDate(0, 0, 1) {
				r := sc.Reflectance(d)
				all = append(all, Obs{Date: d, NDVI: r.NDVI(), NDTI: r.NDTI()})
			}
			v, _, _ := CellCover(all, sow, testParams())
			tr := sc.StrawPct(sow.AddDate(0, 0, -30), sow)
			absErr += math.Abs(v - tr)
			tsum += tr
			esum += v
		}
		n++
		if zarc.CLevel(esum/3) == zarc.CLevel(tsum/3) {
			agree++
		}
	}
	t.Logf("ideal readings: season cover MAE %.2f pp, C level agreement %d/%d (%.1f %%)", absErr/float64(3*n), agree, n, 100*float64(agree)/float64(n))
}
