// Package num holds the small numeric helpers several packages share: order
// statistics (slope percentiles, tillage's robust σ, the report's
// quartiles), by selection in linear expected time instead of a full sort,
// and the one decimal rounding rule of the outputs (Round). Standard
// library only; no I/O.
package num

import (
	"math"
	"slices"
	"sort"
)

// Quantile returns the type-7 quantile (linear interpolation between order
// statistics, as R's default and numpy's "linear") of the non-empty s at
// p in [0, 1]. It reorders s. s holds no NaN.
func Quantile(s []float64, p float64) float64 {
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return slices.Max(s)
	}
	Select(s, lo)
	// After selection s[lo+1:] holds the values ≥ s[lo]; the next order
	// statistic is their minimum.
	return s[lo] + (h-float64(lo))*(slices.Min(s[lo+1:])-s[lo])
}

// Select reorders s so that s[k] is the value a full sort would put there,
// with s[:k] ≤ s[k] ≤ s[k+1:] (Hoare's quickselect, median-of-three pivot,
// insertion sort for short ranges), and returns s[k]. s holds no NaN.
func Select(s []float64, k int) float64 {

	lo, hi := 0, len(s)-1
	for hi-lo > 16 {
		mid := lo + (hi-lo)/2
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		pivot := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < pivot {
				i++
			}
			for s[j] > pivot {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		// Now s[lo..j] ≤ pivot ≤ s[i..hi], and s[j+1..i-1] == pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	sort.Float64s(s[lo : hi+1])
	return s[k]
}

// Round rounds v to n decimals, half away from zero (math.Round of v·10ⁿ),
// and returns 0 rather than -0, so that a value printed after rounding never
// reads "-0". NaN and ±Inf are returned unchanged.
func Round(v float64, n int) float64 {
	p := math.Pow10(n)
	r := math.Round(v*p) / p
	if r == 0 {
		return 0
	}
	return r
}

// Median reorders v in place and returns its median (NaN when empty).
// Short slices are sorted; longer ones use quickselect (linear time). s holds no NaN.
func Median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	if n <= 32 {
		sort.Float64s(v)
		if n%2 == 1 {
			return v[n/2]
		}
		return (v[n/2-1] + v[n/2]) / 2
	}
	hi := Select(v, n/2)
	if n%2 == 1 {
		return hi
	}
	// The lower middle is the largest value left of n/2.
	lo := v[0]
	for _, x := range v[1 : n/2] {
		lo = math.Max(lo, x)
	}
	return (lo + hi) / 2
}
