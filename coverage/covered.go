package coverage

import (
	"sort"

	"github.com/manejo/manejo/spectral"
)

// templatesExplain reports whether the reference templates — green,
// straw and soil, spectral.GreenSpectrum, StrawSpectrum, SoilSpectrum —
// explain a talhão's readings below MaxNDVI (at most maxSoilFitObs, an
// even stride, as fitSoil reads them) to within reading noise: the
// median 4-band misfit of the readings as their mixtures
// (spectral.Coefficients) is at most referenceMisfit, false with fewer
// than MinSoilFitObs readings. It is the template check of calibrate for
// a talhão whose soil fit was refused: the reference soil is a member of
// the fit's family, and most such talhões are no-till fields under straw
// all year that show their soil too rarely to fit it (in today's world 5
// of 200 tuning talhões, seed 12). A declared residue's prior yields to
// it as to the fitted check (strawDeclared, issue 30).
func templatesExplain(cells [][]Obs, p Params) bool {
	use := func(o Obs) bool { return finite(o.NDVI) && o.NDVI < p.MaxNDVI && o.spectrum().Valid() }
	n := 0
	for _, cell := range cells {
		for _, o := range cell {
			if use(o) {
				n++
			}
		}
	}
	// At most maxSoilFitObs readings, an even stride, as fitSoil reads.
	stride := max(1, (n+maxSoilFitObs-1)/maxSoilFitObs)
	res := make([]float64, 0, min(n, maxSoilFitObs))
	i := 0
	for _, cell := range cells {
		for _, o := range cell {
			if !use(o) {
				continue
			}
			if i%stride == 0 {
				_, _, _, e := spectral.Coefficients(spectral.GreenSpectrum, spectral.StrawSpectrum, spectral.SoilSpectrum, o.spectrum())
				if finite(e) {
					res = append(res, e)
				}
			}
			i++
		}
	}
	if len(res) < MinSoilFitObs {
		return false
	}
	sort.Float64s(res)
	return res[len(res)/2] <= referenceMisfit
}
