package coverage

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/spectral"
	"github.com/manejo/manejo/zarc"
)

// TestHarderDiagnostics splits the harder world's straw-cover error by
// what the estimator is given (-covdiag; tuning seed -hardtune): the true
// dry straw and soil spectra (an oracle ceiling: what is left is wetness,
// clouds, noise and the window design), the true soil only, the true straw
// only, and nothing (the default calibration). True sowing dates.
var diagN = flag.Int("diagn", 60, "TestHarderDiagnostics: talhões")

func TestHarderDiagnostics(t *testing.T) {
	if !*covdiag {
		t.Skip("diagnostics: run with -covdiag")
	}
	rng := rand.New(rand.NewPCG(*hardTuneSeed, 2027))
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	type acc struct{ abs, bias, n, cN, cAgree float64 }
	res := map[string]*acc{}
	names := []string{"default calibration", "true straw and soil", "true straw and soil, wet dates skipped", "true straw and soil, truly wet dates skipped", "true soil, reference straw", "true straw, soil fit", "true straw NDTI (reference shape), soil fit", "true straw NDTI (reference shape), true soil", "true straw, true soil NDTI (reference shape)", "true NDTIs, template brightness", "true NDTIs and brightness"}
	for _, n := range names {
		res[n] = &acc{}
	}
	spec := func(r pheno.Reflectance) spectral.Endmember {
		return spectral.Spectrum{Red: r.Red, NIR: r.NIR, SWIR1: r.SWIR1, SWIR2: r.SWIR2}.Endmember()
	}
	for k := 0; k < *diagN; k++ {
		crop := pheno.Soja
		if rng.Float64() < 0.2 {
			crop = pheno.Milho
		}
		f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 8, crop: crop, cloudScale: 1, spectra: pheno.SpectraVaried})
		declared := map[string]Declared{}
		for _, s := range contract.Assessed() {
			sow, _ := f.trueSowing(s)
			declared[s.Label] = Declared{Season: s.Label, Date: sow}
		}
		for _, n := range names {
			est, truth, read := 0.0, 0.0, 0
			for i, s := range contract.Assessed() {
				sow, _ := f.trueSowing(s)
				var p Params
				switch n {
				case "true straw and soil":
					p = Params{Soil: spec(f.sc.Soil), Straw: spec(f.sc.GroundStrawSpectrum(sow))}
				case "true straw and soil, wet dates skipped":
					p = Params{Soil: spec(f.sc.Soil), Straw: spec(f.sc.GroundStrawSpectrum(sow))}
					d, _, _, sw := dateMedians(f.cells)
					p.skip = wetDates(d, sw)
				case "true straw and soil, truly wet dates skipped":
					p = Params{Soil: spec(f.sc.Soil), Straw: spec(f.sc.GroundStrawSpectrum(sow))}
					p.skip = map[timeT]bool{}
					for _, o := range f.cells[0] {
						if f.sc.Wetness(o.Date) > 0.05 {
							p.skip[o.Date] = true
						}
					}
				case "true soil, reference straw":
					p = Params{Soil: spec(f.sc.Soil)}
				case "true straw, soil fit":
					p = Params{Straw: spec(f.sc.GroundStrawSpectrum(sow))}
				case "true straw NDTI (reference shape), soil fit":
					p = Params{Straw: refShaped(f.sc.GroundStrawNDTI(sow))}
				case "true straw NDTI (reference shape), true soil":
					p = Params{Straw: refShaped(f.sc.GroundStrawNDTI(sow)), Soil: spec(f.sc.Soil)}
				case "true NDTIs, template brightness":
					p = Params{Straw: refShaped(f.sc.GroundStrawNDTI(sow)), Soil: soilShaped(f.sc.Soil.NDTI())}
				case "true NDTIs and brightness":
					st, so := refShaped(f.sc.GroundStrawNDTI(sow)), soilShaped(f.sc.Soil.NDTI())
					ts, tb := spec(f.sc.GroundStrawSpectrum(sow)), spec(f.sc.Soil)
					st.SWIR, st.VNIR, so.SWIR, so.VNIR = ts.SWIR, ts.VNIR, tb.SWIR, tb.VNIR
					p = Params{Straw: st, Soil: so}
				case "true straw, true soil NDTI (reference shape)":
					p = Params{Straw: spec(f.sc.GroundStrawSpectrum(sow)), Soil: soilShaped(f.sc.Soil.NDTI())}
				}
				c := Assess(f.cells, contract, declared, "", p)
				sc := c.Seasons[i]
				if !sc.OK {
					continue
				}
				tr := f.sc.StrawPct(sow.AddDate(0, 0, -30), sow)
				e := sc.CoverPct - tr
				res[n].abs += math.Abs(e)
				res[n].bias += e
				res[n].n++
				est, truth, read = est+sc.CoverPct, truth+tr, read+1
			}
			if read == 3 {
				res[n].cN++
				if zarc.CLevel(est/3) == zarc.CLevel(truth/3) {
					res[n].cAgree++
				}
			}
		}
	}
	for _, n := range names {
		a := res[n]
		t.Logf("%-40s seasons %4.0f  MAE %5.2f pp  bias %+5.2f pp  C level agreement %5.1f %% (%.0f talhões)", n, a.n, a.abs/a.n, a.bias/a.n, 100*a.cAgree/a.cN, a.cN)
	}
}

// refShaped is the reference straw with its SWIR2 set to give NDTI b.
func refShaped(b float64) spectral.Endmember {
	s := spectral.StrawSpectrum
	s.SWIR2 = s.SWIR1 * (1 - b) / (1 + b)
	return s.Endmember()
}

// soilShaped is the reference soil with its SWIR2 set to give NDTI b.
func soilShaped(b float64) spectral.Endmember {
	s := spectral.SoilSpectrum
	s.SWIR2 = s.SWIR1 * (1 - b) / (1 + b)
	return s.Endmember()
}
