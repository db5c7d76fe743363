//go:build !research

package coverage

import (
	"time"

	"github.com/manejo/manejo/spectral"
)

// The product's values of the research knobs (research.go, built with
// -tags research, makes them variables for the harness): constants and
// functions, so no test can change how the product reads.

// plainUnmix is false: coverage unmixes on the dry line (newUnmixer).
const plainUnmix = false

// intervalScale is defaultIntervalScale.
const intervalScale = defaultIntervalScale

// declaredIntervalScale is defaultDeclaredIntervalScale.
const declaredIntervalScale = defaultDeclaredIntervalScale

// residueSDScale is 1: the declared prior's spread is the law's.
const residueSDScale = 1.0

// oracleSet is false: no oracle prior replaces a declared one.
func oracleSet() bool { return false }

// oraclePrior is never called in the product (oracleSet is false).
func oraclePrior(time.Time) (residuePrior, bool) { return residuePrior{}, false }

// withOracleSoil is soil: no oracle replaces the talhão's soil.
func withOracleSoil(soil spectral.Endmember, _ bool) spectral.Endmember { return soil }

// withOracleStraw is straw: no oracle replaces a season's straw.
func withOracleStraw(straw spectral.Endmember, _ time.Time) spectral.Endmember { return straw }

// withAgedEnvelope is the declared season's envelope as dryEnvelope gave it.
func withAgedEnvelope(_ *calibration, _ time.Time, env float64, ok bool) (float64, bool) {
	return env, ok
}

// withDeclaredPoint is mean: a declared season is read with the
// posterior-mean straw.
func withDeclaredPoint(_ spectral.StrawFit, mean float64) float64 { return mean }
