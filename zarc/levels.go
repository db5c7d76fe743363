package zarc

import "math"

// TLevel returns the Tabela 1 level (IN SPA/MAPA 2/2025, annex item 2.1,
// row 4) of T, the full years without soil revolving: T < 3 → 1;
// 3 ≤ T < 5 → 2; 5 ≤ T < 8 → 3; T ≥ 8 → 4. T counts full years, so a
// fractional T is floored (the bounds are whole years); negative T is 1 and
// NaN gives 0.
func TLevel(years float64) int {
	switch {
	case math.IsNaN(years):
		return 0
	case years >= 8:
		return 4
	case years >= 5:
		return 3
	case years >= 3:
		return 2
	default:
		return 1
	}
}

// CLevel returns the Tabela 1 level (IN SPA/MAPA 2/2025, annex item 2.1,
// row 5) of C, the straw cover in percent before sowing of the main crop:
// C < 30 → 1; 30 ≤ C < 60 → 2; 60 ≤ C < 90 → 3; C ≥ 90 → 4. NaN gives 0.
func CLevel(pct float64) int {
	switch {
	case math.IsNaN(pct):
		return 0
	case pct < 30:
		return 1
	case pct < 60:
		return 2
	case pct < 90:
		return 3
	default:
		return 4
	}
}
