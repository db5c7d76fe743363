//go:build research

package coverage

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
)

var residueDiag = flag.Bool("residuediag", false, "diagnostics: the declared residue's straw prior against the harder world's true straw NDTI (tuning seed -hardtune)")

// TestResidueDiagnostics compares, season by season of the harder world's
// tuning seed, the true dry ground-straw NDTI in the window with the
// declared residue's prior and with the straw the season is read with,
// declared and undeclared (true sowing), by declared previous crop.
func TestResidueDiagnostics(t *testing.T) {
	if !*residueDiag {
		t.Skip("diagnostics: run with -residuediag")
	}
	rng := rand.New(rand.NewPCG(*hardTuneSeed, 2027))
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	type acc struct{ prior, fitD, fitU, sdSum, in1 []float64 }
	by := map[string]*acc{}
	for k := 0; k < *hardTuneN; k++ {
		crop := pheno.Soja
		if rng.Float64() < 0.2 {
			crop = pheno.Milho
		}
		f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 6, crop: crop, cloudScale: 1, spectra: pheno.SpectraVaried})
		p, cal := calibrate(f.cells, hardParams())
		h := declaredHistory(f.sc)
		for _, s := range contract.Assessed() {
			sow, _ := f.trueSowing(s)
			truth := f.sc.GroundStrawNDTI(sow.AddDate(0, 0, -15))
			pr, ok := h.priorAt(sow, p.WindowDays)
			key := "undeclared"
			if prev := h.previous(sow); len(prev) > 0 {
				key = prev[0].Crop
				if len(prev) > 1 {
					key += "+"
				}
			}
			from := sow.AddDate(0, 0, -envelopeDays)
			u := cal.straw(from, sow).Straw.Endmember().NDTI
			c, _ := cal.withResidue(h, sow, p.WindowDays)
			d := c.straw(from, sow).Straw.Endmember().NDTI
			a := by[key]
			if a == nil {
				a = &acc{}
				by[key] = a
			}
			pe := math.NaN()
			if ok {
				pe = pr.ndti - truth
				a.sdSum = append(a.sdSum, pr.sd)
				in := 0.0
				if math.Abs(pe) <= 1.645*pr.sd {
					in = 1
				}
				a.in1 = append(a.in1, in)
			}
			a.prior, a.fitD, a.fitU = append(a.prior, pe), append(a.fitD, d-truth), append(a.fitU, u-truth)
		}
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	st := func(v []float64) string {
		var m, a float64
		n := 0
		for _, x := range v {
			if !math.IsNaN(x) {
				m += x
				a += math.Abs(x)
				n++
			}
		}
		if n == 0 {
			return "—"
		}
		return fmt.Sprintf("bias %+.3f MAE %.3f", m/float64(n), a/float64(n))
	}
	for _, k := range keys {
		a := by[k]
		fmt.Fprintf(&b, "%-12s n %3d  prior − truth: %s (mean sd %s, 90%% holds %s)  declared fit: %s  undeclared fit: %s\n",
			k, len(a.prior), st(a.prior), st(a.sdSum), st(a.in1), st(a.fitD), st(a.fitU))
	}
	t.Logf("straw NDTI errors, harder world, tuning seed %d, %d talhões (true sowing):\n%s", *hardTuneSeed, *hardTuneN, b.String())
}

var oracleSD = flag.Float64("oraclesd", 0, "diagnostics: TestResidueOracle's prior sd (0: 0.01 and 0.03)")

// TestResidueOracle reads the harder world's tuning seed with each
// season's straw prior centred on its true dry ground-straw NDTI (the
// middle of the window, true sowing) — what no declaration of type and age
// can give when residues of one type and age differ field to field — with
// standard deviations 0.01 and 0.03 (the declared law's): the ceiling of a
// prior on the straw spectrum with this estimator.
func TestResidueOracle(t *testing.T) {
	if !*residueDiag {
		t.Skip("diagnostics: run with -residuediag")
	}
	defer func() { oraclePrior = nil }()
	sds := []float64{0.01, 0.03}
	if *oracleSD > 0 {
		sds = []float64{*oracleSD}
	}
	for _, sd := range sds {
		rng := rand.New(rand.NewPCG(*hardTuneSeed, 2027))
		contract, _ := ParseSeason("2026/2027", MonthDay{})
		var r hardResult
		for k := 0; k < *hardTuneN; k++ {
			crop := pheno.Soja
			if rng.Float64() < 0.2 {
				crop = pheno.Milho
			}
			f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 6, crop: crop, cloudScale: 1, spectra: pheno.SpectraVaried})
			oraclePrior = func(sow timeT) (residuePrior, bool) {
				return residuePrior{ndti: f.sc.GroundStrawNDTI(sow.AddDate(0, 0, -15)), sd: sd, note: "oracle"}, true
			}
			got := AssessHistory(f.cells, contract, nil, nil, zarc.Crop(crop), hardParams())
			tsum := 0.0
			for i, s := range contract.Assessed() {
				sow, _ := f.trueSowing(s)
				tr := f.sc.StrawPct(sow.AddDate(0, 0, -30), sow)
				tsum += tr
				sc := got.Seasons[i]
				rec := seasonRec{truth: tr, est: math.NaN(), strawNDTI: f.sc.GroundStrawNDTI(sow), soil: f.sc.SoilKind()}
				if !sc.Sowing.Date.IsZero() {
					r.sowErr = append(r.sowErr, sc.Sowing.Date.Sub(sow).Hours()/24)
				}
				if sc.OK {
					rec.est, rec.lo, rec.hi = sc.CoverPct, sc.CoverLo, sc.CoverHi
				}
				r.seasons = append(r.seasons, rec)
			}
			r.cs = append(r.cs, cRec{truth: tsum / 3, est: got.Pct, lo: got.PctLo, hi: got.PctHi, ok: got.OK, flagged: got.LevelUncertain})
		}
		r.readings = []readingRec{{0, 0, 0}, {1, 1, 1}}
		t.Logf("oracle straw prior (true NDTI, sd %.3f), harder world, tuning seed %d, %d talhões × 6 cells (detected sowing):\n%v", sd, *hardTuneSeed, *hardTuneN, summarise(r))
	}
}
