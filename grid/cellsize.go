package grid

import (
	"errors"
	"fmt"
)

// ErrCellSize reports a requested cell size outside the legal class of a
// talhão (IN 6.2 III–IV). The CLI maps it to a usage error (exit 2).
var ErrCellSize = errors.New("grid: cell size outside the legal range")

// LargeFieldHa is the area from which a talhão takes the larger cell class
// (IN 6.2 IV). IN 6.2 III says "inferior a 100 hectares" and IV "superior a
// 100 hectares", leaving exactly 100 ha unassigned; manejo gives 100 ha the
// larger class (5–10 ha).
const LargeFieldHa = 100.0

// CellSizeRange returns the legal cell areas in hectares for a talhão of
// areaHa hectares: 1–5 ha under 100 ha (IN 6.2 III), 5–10 ha from 100 ha
// (IN 6.2 IV; 100 ha exactly takes the larger class).
func CellSizeRange(areaHa float64) (minHa, maxHa float64) {
	if areaHa < LargeFieldHa {
		return 1, 5
	}
	return 5, 10
}

// CellSize returns the cell area in hectares for a talhão of areaHa
// hectares: wantHa when it lies in the legal range (CellSizeRange), the
// smallest legal size when wantHa is 0, and an error wrapping ErrCellSize
// otherwise.
func CellSize(areaHa, wantHa float64) (float64, error) {
	lo, hi := CellSizeRange(areaHa)
	if wantHa == 0 {
		return lo, nil
	}
	if !(wantHa >= lo && wantHa <= hi) { // also rejects NaN
		return 0, fmt.Errorf("cell size %g ha for a talhão of %.2f ha, legal %g–%g ha: %w", wantHa, areaHa, lo, hi, ErrCellSize)
	}
	return wantHa, nil
}
