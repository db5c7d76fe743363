//go:build research

package coverage

import (
	"time"

	"github.com/manejo/manejo/spectral"
)

// Research builds (go test -tags research: the accuracy harnesses and
// diagnostics, docs/coverage.md) turn the knobs below into variables that
// the harness's flags set. The product is built without the tag
// (noresearch.go): constants in their place, no package-level state that
// a test could change.

// plainUnmix unmixes with spectral.New, the estimator before the dry
// line, for before/after figures (-plainunmix).
var plainUnmix bool

// intervalScale is defaultIntervalScale unless -intervalscale sets it.
var intervalScale = defaultIntervalScale

// declaredIntervalScale is defaultDeclaredIntervalScale unless
// -declaredintervalscale sets it.
var declaredIntervalScale = defaultDeclaredIntervalScale

// residueSDScale scales the declared residue prior's standard deviation
// (-residuesdscale; 1 in the product).
var residueSDScale = 1.0

// oraclePrior, when set (TestResidueOracle), replaces the declared prior
// of the season sown on a day by one the harness knows the truth of, to
// measure how far any prior on the straw spectrum could go.
var oraclePrior func(sowing time.Time) (residuePrior, bool)

func oracleSet() bool { return oraclePrior != nil }

// oracleSoil, when set (TestSoilOracle), replaces the soil endmember
// that calibrate settled on for a talhão (fitted: the talhão's own fit;
// otherwise the reference soil) by what it returns, to measure how far a
// soil estimate could take the calibrated reading.
var oracleSoil func(soil spectral.Endmember, fitted bool) spectral.Endmember

// withOracleSoil is soil, or oracleSoil's replacement when it is set.
func withOracleSoil(soil spectral.Endmember, fitted bool) spectral.Endmember {
	if oracleSoil == nil {
		return soil
	}
	return oracleSoil(soil, fitted)
}

// oracleStraw, when set (TestSoilOracle), replaces the straw endmember a
// calibrated season sown on sowing is read with (its intervals keep the
// belief's spectra): the straw's true brightness as well as its NDTI.
var oracleStraw func(straw spectral.Endmember, sowing time.Time) spectral.Endmember

// withOracleStraw is straw, or oracleStraw's replacement when it is set.
func withOracleStraw(straw spectral.Endmember, sowing time.Time) spectral.Endmember {
	if oracleStraw == nil {
		return straw
	}
	return oracleStraw(straw, sowing)
}
