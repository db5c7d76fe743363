//go:build research

package coverage

import (
	"flag"
	"strings"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/spectral"
)

var (
	soilOracleRuns   = flag.String("soiloracle", "", "diagnostics: TestSoilOracle's runs, comma-separated (estimator, soil, soilndti, soilbright, straw, both), or all")
	soilOracleUndecl = flag.Bool("soiloracleundeclared", false, "diagnostics: TestSoilOracle without the declared crop history")
	soilOracleSowing = flag.Bool("soiloracletruesowing", false, "diagnostics: TestSoilOracle with the true sowing dates declared")
)

// soilOracleSoilEnd is f's true dry soil as an endmember.
func soilOracleSoilEnd(f synthField) spectral.Endmember {
	r := f.sc.Soil
	return spectral.Spectrum{Red: r.Red, NIR: r.NIR, SWIR1: r.SWIR1, SWIR2: r.SWIR2}.Endmember()
}

// soilOracles are the soil replacements of TestSoilOracle by run name:
// given a talhão, the function oracleSoil is set to.
var soilOracles = map[string]func(f synthField) func(spectral.Endmember, bool) spectral.Endmember{
	// The talhão's true dry soil: NDTI, brightness and NDVI.
	"soil": func(f synthField) func(spectral.Endmember, bool) spectral.Endmember {
		return func(spectral.Endmember, bool) spectral.Endmember { return soilOracleSoilEnd(f) }
	},
	// Its NDTI only (the estimator's brightness and NDVI).
	"soilndti": func(f synthField) func(spectral.Endmember, bool) spectral.Endmember {
		return func(e spectral.Endmember, _ bool) spectral.Endmember { e.NDTI = soilOracleSoilEnd(f).NDTI; return e }
	},
	// Its brightness only (VNIR and SWIR; the estimator's NDTI and NDVI).
	"soilbright": func(f synthField) func(spectral.Endmember, bool) spectral.Endmember {
		return func(e spectral.Endmember, _ bool) spectral.Endmember {
			tr := soilOracleSoilEnd(f)
			e.SWIR, e.VNIR = tr.SWIR, tr.VNIR
			return e
		}
	},
}

// TestSoilOracle decomposes the harder world's straw-cover error by side,
// on the calibrated reading itself (-soiloracle; tuning seed -hardtune,
// -hardtunen talhões × 6 cells, detected sowing, the crop history
// declared unless -soiloracleundeclared): the estimator as it is
// ("estimator"); the soil endmember calibrate settled on replaced by the
// talhão's true dry soil ("soil"), by the estimator's soil with the true
// NDTI ("soilndti") or the true brightness ("soilbright"), the straw
// calibrated as usual; each season's straw prior centred on its true
// ground-straw NDTI with sd 0.01 (as TestResidueOracle), the estimator's
// soil ("straw"); and both ("both"); the same with the season read with
// its true straw spectrum, brightness included ("strawspec", "bothspec");
// -soiloracletruesowing declares the true sowings. Each side's ceiling with this
// estimator (docs/coverage.md, "The soil side").
func TestSoilOracle(t *testing.T) {
	if *soilOracleRuns == "" {
		t.Skip("diagnostics: run with -soiloracle all (or a list)")
	}
	defer func() { oracleSoil, oraclePrior, oracleStraw = nil, nil, nil }()
	runs := []string{"estimator", "soil", "soilndti", "soilbright", "straw", "both", "strawspec", "bothspec"}
	if *soilOracleRuns != "all" {
		runs = strings.Split(*soilOracleRuns, ",")
	}
	for _, run := range runs {
		hook := func(f synthField) {
			oracleSoil, oraclePrior, oracleStraw = nil, nil, nil
			soil := run
			if run == "both" || run == "bothspec" {
				soil = "soil"
			}
			if s := soilOracles[soil]; s != nil {
				oracleSoil = s(f)
			}
			if run == "strawspec" || run == "bothspec" {
				oracleStraw = func(_ spectral.Endmember, sow timeT) spectral.Endmember {
					r := f.sc.GroundStrawSpectrum(sow.AddDate(0, 0, -15))
					return spectral.Spectrum{Red: r.Red, NIR: r.NIR, SWIR1: r.SWIR1, SWIR2: r.SWIR2}.Endmember()
				}
			}
			if run == "straw" || run == "both" || run == "strawspec" || run == "bothspec" {
				oraclePrior = func(sow timeT) (residuePrior, bool) {
					return residuePrior{ndti: f.sc.GroundStrawNDTI(sow.AddDate(0, 0, -15)), sd: 0.01, note: "oracle"}, true
				}
			}
		}
		r := runHarderHook(*hardTuneN, 6, *hardTuneSeed, pheno.SpectraVaried, nil, !*soilOracleUndecl, hook, *soilOracleSowing)
		r.readings = []readingRec{{0, 0, 0}, {1, 1, 1}}
		t.Logf("oracle %q, harder world (declared %v, true sowing %v), tuning seed %d, %d talhões × 6 cells:\n%v", run, !*soilOracleUndecl, *soilOracleSowing, *hardTuneSeed, *hardTuneN, summarise(r))
	}
}
