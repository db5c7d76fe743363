package testkit

import (
	"math"
	"sort"
)

// The plain baseline's operating point (tillage.MedianNDTIDrop beside every
// accuracy figure, docs/tillage.md), shared by the tillage research
// harnesses and cmd/manejo's US-world harness. Here, not in tillage: the
// tillage package's own tests could not import a helper that imports it,
// and the product has no use for it. The rule comes in as a predicate.

// LargestFiring is the largest threshold at which a rule monotone in its
// threshold still fires (firing at d, it fires at every d' < d), to within
// 2⁻²⁹: found by bisection on [−1, 1] (30 halvings) from below, so the rule
// fires at the value returned and the true edge lies at most 2⁻²⁹ above it
// (the search stops at 1: a rule firing everywhere gives 1 − 2⁻²⁹).
// A unit is flagged at threshold d when d is below the value returned, and
// not flagged at or above it, which differs from the rule itself only for d
// within those 2⁻²⁹ (there the rule still fires).
// −Inf when the rule does not fire at −1: then no threshold flags the unit.
// For the median-NDTI-drop rule, fires(d) is "MedianNDTIDrop(cells, d)
// finds a break", and the result is the talhão's largest drop.
func LargestFiring(fires func(threshold float64) bool) float64 {
	lo, hi := -1.0, 1.0
	if !fires(lo) {
		return math.Inf(-1)
	}
	for range 30 {
		mid := (lo + hi) / 2
		if fires(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// ThresholdAtFP is a score's threshold at the lowest false-positive rate
// not above fp/len(neg), a unit flagged when its score exceeds it: the
// (fp+1)-th largest of the negatives' scores, −Inf when fp ≥ len(neg)
// (every unit with a finite score flagged). Negatives tied at the
// threshold all stay unflagged, so the rate can fall below fp/len(neg).
// neg is not reordered. Chosen on the scored units' own negatives, it is an
// operating point a rule with fixed thresholds does not get.
func ThresholdAtFP(neg []float64, fp int) float64 {
	if fp >= len(neg) {
		return math.Inf(-1)
	}
	s := append([]float64(nil), neg...)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	return s[fp]
}
