package classify

import (
	"math"
)

// Tabela 1 of IN SPA/MAPA 2/2025 (annex, item 2.1): the lower bound of levels
// 2, 3 and 4 of each numeric indicator. A value below bounds[0] is level 1;
// a value at or above bounds[i] and below bounds[i+1] is level i+2.
var (
	// V% in 0–20 cm, by CTC class at pH 7,0 (cmolc dm⁻³): CTC < 5, 5 ≤ CTC < 10, CTC ≥ 10.
	vBoundsCTCLow  = [3]float64{35, 40, 50}
	vBoundsCTCMid  = [3]float64{40, 45, 55}
	vBoundsCTCHigh = [3]float64{50, 55, 65}
	// Ca in 20–40 cm, cmolc dm⁻³.
	caBounds = [3]float64{0.5, 1, 1.5}
	// T and C are the rows of zarc.TLevel and zarc.CLevel.
	// m% in 20–40 cm runs the other way: m ≥ 20 is level 1, 10 ≤ m < 20
	// level 2, 5 ≤ m < 10 level 3, m < 5 level 4.
	mBounds = [3]float64{20, 10, 5}
)

// CTC class bounds of the V% row of Tabela 1, cmolc dm⁻³.
const (
	ctcMid  = 5.0
	ctcHigh = 10.0
)

// ascending returns the Tabela 1 level of v for bounds where higher is better.
func ascending(v float64, b [3]float64) int {
	switch {
	case v < b[0]:
		return 1
	case v < b[1]:
		return 2
	case v < b[2]:
		return 3
	default:
		return 4
	}
}

// VLevel returns the Tabela 1 level (1–4) of the base saturation vPct (%) in
// 0–20 cm for a soil whose CTC at pH 7,0 is ctc (cmolc dm⁻³): with CTC < 5
// the bounds are 35, 40, 50 %; with 5 ≤ CTC < 10 they are 40, 45, 55 %; with
// CTC ≥ 10 they are 50, 55, 65 %. Each bound belongs to the upper level
// (V = 35 with CTC 4 is level 2). NaN inputs give level 0.
func VLevel(ctc, vPct float64) int {
	if math.IsNaN(ctc) || math.IsNaN(vPct) {
		return 0
	}
	switch {
	case ctc < ctcMid:
		return ascending(vPct, vBoundsCTCLow)
	case ctc < ctcHigh:
		return ascending(vPct, vBoundsCTCMid)
	default:
		return ascending(vPct, vBoundsCTCHigh)
	}
}

// CaLevel returns the Tabela 1 level (1–4) of the calcium content ca
// (cmolc dm⁻³) in 20–40 cm: Ca < 0,5 → 1; 0,5 ≤ Ca < 1 → 2; 1 ≤ Ca < 1,5 → 3;
// Ca ≥ 1,5 → 4. NaN gives 0.
func CaLevel(ca float64) int {
	if math.IsNaN(ca) {
		return 0
	}
	return ascending(ca, caBounds)
}

// MLevel returns the Tabela 1 level (1–4) of the aluminium saturation mPct
// (%) in 20–40 cm, where less is better: m ≥ 20 → 1; 10 ≤ m < 20 → 2;
// 5 ≤ m < 10 → 3; m < 5 → 4. NaN gives 0.
func MLevel(mPct float64) int {
	switch {
	case math.IsNaN(mPct):
		return 0
	case mPct >= mBounds[0]:
		return 1
	case mPct >= mBounds[1]:
		return 2
	case mPct >= mBounds[2]:
		return 3
	default:
		return 4
	}
}

// Mi band bounds of IN 3.2 I–IV.
const (
	bandNM1 = 1.75
	bandNM2 = 2.75
	bandNM3 = 3.50
)

// Band returns the management level that the mean of the indicator points mi
// gives before any exclusion or downgrade rule (IN 3.2): NM1 if Mi ≤ 1,75;
// NM2 if 1,75 < Mi ≤ 2,75; NM3 if 2,75 < Mi ≤ 3,50; NM4 if Mi > 3,50. Each
// bound belongs to the lower level. NaN gives 0.
func Band(mi float64) int {
	switch {
	case math.IsNaN(mi):
		return 0
	case mi <= bandNM1:
		return 1
	case mi <= bandNM2:
		return 2
	case mi <= bandNM3:
		return 3
	default:
		return 4
	}
}
