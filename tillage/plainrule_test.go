package tillage

import (
	"math"
	"sort"
	"testing"
	"time"
)

// The plain rule at equal false-positive rate, shared by the research
// harnesses (window_research_test.go, soilgate_research_test.go,
// union_research_test.go) that print every "plain at equal FPR" figure of
// docs/tillage.md: kept here, without the research tag, so that make test
// runs its tests.

// plainMaxT is the largest drop at which MedianNDTIDrop still fires on
// cells, by bisection (−1 when it never fires). Firing is monotone in the
// drop (a break needs pre − post > drop), so the bisection is exact to
// 2⁻²⁴.
func plainMaxT(cells []Cell) float64 {
	fires := func(d float64) bool { return len(MedianNDTIDrop(cells, d)) > 0 }
	lo, hi := -1.0, 1.0
	if !fires(lo) {
		return -1
	}
	for range 25 {
		mid := (lo + hi) / 2
		if fires(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// plainAtFPR is the plain rule's drop threshold at the lowest false-positive
// rate not above fp/len(negMax): the rule fires on a unit whose largest
// firing drop (plainMaxT) exceeds it, so it is the (fp+1)-th largest of the
// negatives' maxima, −Inf (every unit fires) when fp ≥ len(negMax). Ties at
// the threshold all stay unfired, so the rate can fall below fp/len(negMax).
// The threshold is chosen on the scored units' own negatives: an advantage
// Detect, whose thresholds are fixed, does not have.
func plainAtFPR(negMax []float64, fp int) float64 {
	if fp >= len(negMax) {
		return math.Inf(-1)
	}
	neg := append([]float64(nil), negMax...)
	sort.Sort(sort.Reverse(sort.Float64Slice(neg)))
	return neg[fp]
}

// aucOf is the area under the ROC curve of a score: the share of
// (positive, negative) pairs the positive scores above, a tie counting
// half.
func aucOf(pos, neg []float64) float64 {
	var s float64
	for _, x := range pos {
		for _, y := range neg {
			switch {
			case x > y:
				s++
			case x == y:
				s += 0.5
			}
		}
	}
	return s / float64(len(pos)*len(neg))
}

func TestPlainAtFPR(t *testing.T) {
	neg := []float64{0.02, 0.08, 0.05, 0.05, -1}
	cases := []struct {
		name     string
		neg      []float64
		fp       int
		want     float64
		firesNeg int // negatives with max > want
	}{
		{"FPR 0: the largest", neg, 0, 0.08, 0},
		{"one false positive", neg, 1, 0.05, 1},
		{"tie: both 0.05 stay unfired", neg, 2, 0.05, 1},
		{"past the tie", neg, 3, 0.02, 3},
		{"never-firing negative", neg, 4, -1, 4},
		{"FPR 1: every unit fires", neg, 5, math.Inf(-1), 5},
		{"fp beyond n", neg, 9, math.Inf(-1), 5},
		{"all −1, FPR 0", []float64{-1, -1, -1}, 0, -1, 0},
		{"all −1, FPR 1", []float64{-1, -1, -1}, 3, math.Inf(-1), 3},
		{"no negatives", nil, 0, math.Inf(-1), 0},
	}
	for _, c := range cases {
		in := append([]float64(nil), c.neg...)
		got := plainAtFPR(in, c.fp)
		if got != c.want {
			t.Errorf("%s: plainAtFPR(%v, %d) = %v, want %v", c.name, c.neg, c.fp, got, c.want)
		}
		var fired int
		for _, m := range c.neg {
			if m > got {
				fired++
			}
		}
		if fired != c.firesNeg || fired > c.fp {
			t.Errorf("%s: %d negatives fire at %v, want %d (≤ fp %d)", c.name, fired, got, c.firesNeg, c.fp)
		}
		for i := range in {
			if in[i] != c.neg[i] {
				t.Fatalf("%s: plainAtFPR reordered its input", c.name)
			}
		}
	}
}

// TestPlainMaxT: on one short series the bisection lands on the largest
// drop of a 0.001 grid at which MedianNDTIDrop fires (within the grid
// step), and is −1 on a series that never fires.
func TestPlainMaxT(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	series := func(ndvi float64, ndti ...float64) []Cell {
		c := Cell{ID: "c"}
		for i, v := range ndti {
			c.Obs = append(c.Obs, Obs{Date: t0.AddDate(0, 0, 8*i), NDTI: v, NDVI: ndvi})
		}
		return []Cell{c, {ID: "border", Border: true, Obs: []Obs{{Date: t0, NDTI: 0.9, NDVI: 0.2}}}}
	}
	cases := []struct {
		name  string
		cells []Cell
	}{
		{"one drop", series(0.2, 0.12, 0.11, 0.13, 0.05, 0.06, 0.04, 0.05)},
		{"two drops", series(0.2, 0.15, 0.14, 0.16, 0.10, 0.09, 0.11, 0.03, 0.02, 0.04)},
		{"rise", series(0.2, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07)},
		{"green: never fires", series(0.5, 0.12, 0.11, 0.13, 0.05, 0.06, 0.04)},
	}
	for _, c := range cases {
		grid := -1.0
		for i := -1000; i <= 1000; i++ {
			if d := float64(i) / 1000; len(MedianNDTIDrop(c.cells, d)) > 0 {
				grid = max(grid, d)
			}
		}
		got := plainMaxT(c.cells)
		if got < grid-1e-9 || got > grid+0.001 {
			t.Errorf("%s: plainMaxT = %.7f, largest firing grid drop %.3f", c.name, got, grid)
		}
		if len(MedianNDTIDrop(c.cells, -1)) == 0 && got != -1 {
			t.Errorf("%s: plainMaxT = %v on a series that never fires, want −1", c.name, got)
		}
		if got > -1 && len(MedianNDTIDrop(c.cells, got)) == 0 {
			t.Errorf("%s: MedianNDTIDrop does not fire at plainMaxT %.7f", c.name, got)
		}
	}
}

// TestAUCOf: a hand case. Positives 0.3, 0.2, 0.1 against negatives 0.2,
// 0.0: pairs above 1+1 (0.3), 0.5+1 (0.2 ties 0.2), 0+1 (0.1) = 4.5 of 6.
func TestAUCOf(t *testing.T) {
	if got := aucOf([]float64{0.3, 0.2, 0.1}, []float64{0.2, 0}); got != 0.75 {
		t.Errorf("aucOf = %v, want 0.75", got)
	}
	if got := aucOf([]float64{math.Inf(-1)}, []float64{math.Inf(-1), 1}); got != 0.25 {
		t.Errorf("aucOf with unmeasured units = %v, want 0.25", got)
	}
}
