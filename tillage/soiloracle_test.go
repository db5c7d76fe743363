package tillage

import (
	"os"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/spectral"
)

// oracleSoil, when set, replaces harnessParams' soil by the one it returns
// for the scenario drawn last (oracleSc; diagnostics).
var (
	oracleSoil func(*pheno.Scenario, spectral.Endmember) spectral.Endmember
	oracleSc   *pheno.Scenario
)

// TestDiagSoilOracle is TestDiagHarderTune's varied world (tuning seed 1,
// 200 + 200) read with each talhão's true soil (ONLYNDTI=1: its NDTI on the
// reference soil's shape) instead of the calibration: the ceiling of any
// soil calibration for tillage (-tilldiag17).
func TestDiagSoilOracle(t *testing.T) {
	if !*tilldiag17 {
		t.Skip("-tilldiag17 not set")
	}
	onScenario = func(s *pheno.Scenario) { oracleSc = s }
	defer func() { onScenario, oracleSoil, oracleSc = nil, nil, nil }()
	oracleSoil = func(s *pheno.Scenario, e spectral.Endmember) spectral.Endmember {
		r := s.Soil
		sp := spectral.Spectrum{Red: r.Red, NIR: r.NIR, SWIR1: r.SWIR1, SWIR2: r.SWIR2}
		if os.Getenv("ONLYNDTI") != "" {
			b := sp.Endmember().NDTI
			x := spectral.SoilSpectrum
			x.SWIR2 = x.SWIR1 * (1 - b) / (1 + b)
			return x.Endmember()
		}
		return sp.Endmember()
	}
	g := &phenoGen{revisit: 5, spectra: pheno.SpectraVaried}
	h := talhaoOnly(g, debugParams(), 200, 1, ndtiDrop)
	t.Logf("oracle soil: events P %.3f R %.3f | %v", h.det.precision(), h.det.recall(), h.fDet)
	t.Log(h)
}
