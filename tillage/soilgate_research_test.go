//go:build research

package tillage

import (
	"fmt"
	"testing"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/internal/usworld"
)

// The step test's relative gate measured to the soil a portfolio shows
// (issue 30, soilgate): on the US-maize world Calibrate finds no soil
// (its high-cover fields are not mixtures of the template family), so
// the gate measures to the reference oxisol's NDTI (0.053) while the
// world's soils read 0.04–0.12. tuning.pfSoilQ measures it instead to the
// barest ground the other talhões of the portfolio show
// (Portfolio.soilNDTI). Every figure beside MedianNDTIDrop at the same
// false-positive rate.
//
//	go test -tags research -count=1 -run 'TestUSWorldSoilGate|TestPortfolioWorldSoilGate' -v ./tillage/ -timeout 1h -usgate.seeds 1,2,3

// usRates reads a field-year confusion as TPR, FPR and balanced accuracy.
func usRates(c fieldPR) string {
	return fmt.Sprintf("TPR %.3f FPR %.3f BA %.3f (TP %d FN %d FP %d TN %d)",
		ratio(c.tp, c.tp+c.fn), ratio(c.fp, c.fp+c.tn), c.balanced(), c.tp, c.fn, c.fp, c.tn)
}

// usPlainAt is the plain rule at the lowest drop whose false-positive
// rate does not exceed fp/nNeg (maxes: each field-year's plainMaxT).
func usPlainAt(vs []usVerdict, maxes []float64, fp int) (fieldPR, float64) {
	var neg []float64
	for i, v := range vs {
		if !v.ct {
			neg = append(neg, maxes[i])
		}
	}
	drop := testkit.ThresholdAtFP(neg, fp)
	var c fieldPR
	for i, v := range vs {
		c.add(maxes[i] > drop, v.ct)
	}
	return c, drop
}

// TestUSWorldSoilGate: field-year TPR / FPR / BA of Detect with the step
// test's relative gate measured to the portfolio's soil (stepSoil:
// quantiles of the other talhões' barest levels, with or without a cap)
// against the reference soil, beside MedianNDTIDrop at each variant's
// false-positive rate, on the clean world and the full one.
func TestUSWorldSoilGate(t *testing.T) {
	variants := []struct {
		name   string
		q, m   float64
		oracle bool // the field's true dry soil NDTI
	}{{"reference soil", 0, 0, false}, {"portfolio q0.10", 0.1, 0, false}, {"portfolio q0.25", 0.25, 0, false},
		{"portfolio q0.10 ≤ 0.12", 0.1, 0.12, false}, {"true soil (oracle)", 0, 0, true}}
	for _, seed := range usGateSeedList(t) {
		for _, world := range usGateWorlds {
			w := usworld.Generate(usworld.Config{Seed: seed, Artifacts: world.a})
			var maxes []float64
			for _, vr := range variants {
				vs := usVerdictsTuned(w, func(t *tuning, f usworld.Field) {
					t.pfSoilQ, t.pfSoilMax = vr.q, vr.m
					if vr.oracle {
						t.stepSoilOracle = f.SoilNDTI
					}
				})
				if maxes == nil {
					for _, v := range vs {
						maxes = append(maxes, plainMaxT(v.cells))
					}
				}
				var c fieldPR
				var soils []float64
				for _, v := range vs {
					c.add(v.flagged, v.ct)
					soils = append(soils, v.p.stepSoil())
				}
				pc, drop := usPlainAt(vs, maxes, c.fp)
				t.Logf("seed %d %s, %s: Detect %s; plain@FPR (drop > %.4f) %s; gate soil q10/50/90 %.3f/%.3f/%.3f",
					seed, world.name, vr.name, usRates(c), drop, usRates(pc), num.Quantile(soils, 0.1), num.Quantile(soils, 0.5), num.Quantile(soils, 0.9))
			}
		}
	}
}

// TestPortfolioWorldSoilGate: the portfolio world (the only team world
// whose talhões are read with a portfolio) on its tuning seeds, the step
// test's gate measured to the reference soil and to the portfolio's.
func TestPortfolioWorldSoilGate(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		for _, q := range []float64{0, 0.1} {
			p := DefaultParams()
			p.tune.pfSoilQ = q
			s := runPortfolio(pfWorld, p, 4, seed)
			t.Logf("portfolio world, tuning seed %d, portfolio soil quantile %.2f (0: reference soil):\n%v", seed, q, s)
		}
	}
}
