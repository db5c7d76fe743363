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

var strawDiag = flag.Bool("strawdiag", false, "diagnostics: declared vs undeclared season errors by template check and residue (tuning seed -hardtune)")

// TestStrawDeclaredSplit splits the season errors of the tuning seed,
// declared and undeclared, by whether the talhão passes the template check
// and by the declared residue.
func TestStrawDeclaredSplit(t *testing.T) {
	if !*strawDiag {
		t.Skip("diagnostics: run with -strawdiag")
	}
	for _, sp := range []pheno.Spectra{pheno.SpectraVaried, pheno.SpectraReference} {
		rng := rand.New(rand.NewPCG(*hardTuneSeed, 2027))
		contract, _ := ParseSeason("2026/2027", MonthDay{})
		type acc struct{ n, u, d, ub, db float64 }
		by := map[string]*acc{}
		add := func(k string, eu, ed float64) {
			a := by[k]
			if a == nil {
				a = &acc{}
				by[k] = a
			}
			a.n++
			a.u += math.Abs(eu)
			a.d += math.Abs(ed)
			a.ub += eu
			a.db += ed
		}
		for k := 0; k < *hardTuneN; k++ {
			crop, f := harderField6(rng, sp)
			h := declaredHistory(f.sc)
			p, _ := calibrate(f.cells, hardParams())
			u := AssessHistory(f.cells, contract, nil, nil, zarc.Crop(crop), hardParams())
			d := AssessHistory(f.cells, contract, nil, h, zarc.Crop(crop), hardParams())
			for i, s := range contract.Assessed() {
				sow, _ := f.trueSowing(s)
				tr := f.sc.StrawPct(sow.AddDate(0, 0, -30), sow)
				if !u.Seasons[i].OK || !d.Seasons[i].OK {
					continue
				}
				eu, ed := u.Seasons[i].CoverPct-tr, d.Seasons[i].CoverPct-tr
				tk := fmt.Sprintf("templates=%v", p.templates)
				add(tk, eu, ed)
				res := "none"
				if prev := h.previous(u.Seasons[i].Sowing.Date); len(prev) > 0 {
					res = prev[0].Crop
					age := u.Seasons[i].Sowing.Date.Sub(prev[0].End).Hours() / 24
					switch {
					case age < 45:
						res += " <45d"
					case age < 120:
						res += " 45-120d"
					default:
						res += " >120d"
					}
				}
				add(tk+" "+res, eu, ed)
				add("soil "+f.sc.SoilKind(), eu, ed)
			}
		}
		keys := make([]string, 0, len(by))
		for k := range by {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			a := by[k]
			fmt.Fprintf(&b, "%-36s n %4.0f  undeclared MAE %5.2f bias %+5.2f  declared MAE %5.2f bias %+5.2f\n", k, a.n, a.u/a.n, a.ub/a.n, a.d/a.n, a.db/a.n)
		}
		t.Logf("world %d, seed %d, %d talhões:\n%s", sp, *hardTuneSeed, *hardTuneN, b.String())
	}
}

// TestStrawMisfits prints the soil fit's misfit quantiles per world.
func TestStrawMisfits(t *testing.T) {
	if !*strawDiag {
		t.Skip("diagnostics: run with -strawdiag")
	}
	for _, sp := range []pheno.Spectra{pheno.SpectraVaried, pheno.SpectraReference} {
		rng := rand.New(rand.NewPCG(*hardTuneSeed, 2027))
		var ms []float64
		for k := 0; k < *hardTuneN; k++ {
			_, f := harderField6(rng, sp)
			p := hardParams().withDefaults()
			fit, ok := fitSoil(f.cells, p, false)
			m := math.Inf(1)
			if ok {
				m = fit.Misfit
			}
			ms = append(ms, m)
			if sp == pheno.SpectraReference && m > 0.004 {
				sf, sok := fitSoil(f.cells, p, true)
				t.Logf("reference talhão %d: misfit %v ok %v; strict %v %v edge %v; readings below MaxNDVI %d; covered %v", k, fit.Misfit, ok, sf.Misfit, sok, fit.AtEdge(), countBelow(f.cells, p.MaxNDVI), templatesExplain(f.cells, p))
			}
		}
		sort.Float64s(ms)
		q := func(x float64) float64 { return ms[int(x*float64(len(ms)-1))] }
		t.Logf("world %d: misfit q05 %.4f q25 %.4f q50 %.4f q75 %.4f q95 %.4f; ≤0.0025: %d, ≤0.003: %d, ≤0.004: %d of %d", sp, q(0.05), q(0.25), q(0.5), q(0.75), q(0.95),
			sort.SearchFloat64s(ms, 0.0025), sort.SearchFloat64s(ms, 0.003), sort.SearchFloat64s(ms, 0.004), len(ms))
	}
}

// TestStrawSeasonCorr measures, on the tuning seed, the correlation of
// the three seasons' cover errors within a talhão (declared and not) and
// the C error against its interval's half-width.
func TestStrawSeasonCorr(t *testing.T) {
	if !*strawDiag {
		t.Skip("diagnostics: run with -strawdiag")
	}
	for _, declare := range []bool{false, true} {
		r := runHarderDeclared(*hardTuneN, 6, *hardTuneSeed, pheno.SpectraVaried, nil, declare)
		var sxy, sxx, syy float64
		var zs []float64
		for k := 0; k+2 < len(r.seasons); k += 3 {
			s := r.seasons[k : k+3]
			ok := true
			var e [3]float64
			for i := range s {
				if math.IsNaN(s[i].est) {
					ok = false
					break
				}
				// standardised by the half-width on the error's side
				h := (s[i].hi - s[i].lo) / 2 / 1.645
				e[i] = (s[i].est - s[i].truth) / math.Max(h, 1)
			}
			if !ok {
				continue
			}
			for i := 0; i < 3; i++ {
				for j := i + 1; j < 3; j++ {
					sxy += e[i] * e[j]
				}
				sxx += e[i] * e[i]
			}
			_ = syy
		}
		rho := sxy / 3 / (sxx / 3)
		for _, c := range r.cs {
			if c.ok {
				zs = append(zs, (c.est-c.truth)/math.Max((c.hi-c.lo)/2/1.645, 0.5))
			}
		}
		var m2 float64
		for _, z := range zs {
			m2 += z * z
		}
		t.Logf("declare %v: season standardised-error correlation %.3f; C z rms %.3f (1 = calibrated Gaussian)", declare, rho, math.Sqrt(m2/float64(len(zs))))
	}
}

// harderField6 draws the next talhão of the harder harness's tuning run
// (runHarderDeclared's draw: 80 % soybean, 20 % maize; 6 cells) in the
// given world, and its main crop.
func harderField6(rng *rand.Rand, sp pheno.Spectra) (string, synthField) {
	crop := pheno.Soja
	if rng.Float64() < 0.2 {
		crop = pheno.Milho
	}
	return crop, newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 6, crop: crop, cloudScale: 1, spectra: sp})
}
