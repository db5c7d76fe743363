package coverage

import (
	"fmt"
	"github.com/manejo/manejo/spectral"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
)

// TestSoilFitDiag prints, per tuning talhão of the varied world (40
// talhões, seed -hardtune), the true soil NDTI against spectral.FitSoil's
// on the talhão's dry readings bare of green (NDVI < 0.3, wet dates out),
// on all of them and on the 30 % and 10 % of lowest NDTI (the barest),
// with its SWIR1 factor and misfit (-covdiag). It shows the misfit search
// does not find these soils' NDTI (docs/coverage.md, "tried").
func TestSoilFitDiag(t *testing.T) {
	if !*covdiag {
		t.Skip("diagnostics: run with -covdiag")
	}
	rng := rand.New(rand.NewPCG(*hardTuneSeed, 2027))
	p := Params{}.withDefaults()
	for k := 0; k < 40; k++ {
		f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 8, crop: pheno.Soja, cloudScale: 1, spectra: pheno.SpectraVaried})
		_ = p
		d, _, _, sw := dateMedians(f.cells)
		wet := wetDates(d, sw)
		var rs []spectral.Spectrum
		var nd []float64
		for _, c := range f.cells {
			for _, o := range c {
				if !finite(o.NDVI) || o.NDVI >= 0.3 || wet[zarc.Day(o.Date)] || !o.spectrum().Valid() {
					continue
				}
				rs = append(rs, o.spectrum())
				nd = append(nd, o.NDTI)
			}
		}
		q := append([]float64(nil), nd...)
		sort.Float64s(q)
		out := ""
		for _, frac := range []float64{1, 0.3, 0.1} {
			lim := q[min(len(q)-1, int(frac*float64(len(q))))]
			var sel []spectral.Spectrum
			for i, r := range rs {
				if nd[i] <= lim {
					sel = append(sel, r)
				}
			}
			fit, ok := spectral.FitSoil(spectral.GreenSpectrum, spectral.StrawSpectrum, spectral.SoilSpectrum, sel, 30)
			out += fmt.Sprintf("  [%.1f: %.3f f %.3f m %.4f %v]", frac, fit.Soil.Endmember().NDTI, fit.SWIR1, fit.Misfit, ok)
		}
		t.Logf("%-20s true %.3f %s", f.sc.SoilKind(), f.sc.Soil.NDTI(), out)
	}
}
