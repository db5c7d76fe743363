package tillage

import (
	"math"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
)

// The plain rule's largest firing drop, for the research harnesses
// (window_research_test.go, soilgate_research_test.go,
// union_research_test.go) that print every "plain at equal FPR" figure of
// docs/tillage.md; the bisection and the threshold at a false-positive
// count (testkit.ThresholdAtFP) are internal/testkit's, shared with
// cmd/manejo's US-world harness. Kept without the research tag, so that
// make test runs its tests.

// plainMaxT is the largest drop at which MedianNDTIDrop still fires on
// cells (testkit.LargestFiring: firing is monotone in the drop, a break
// needs pre − post > drop), −Inf when it never fires.
func plainMaxT(cells []Cell) float64 {
	return testkit.LargestFiring(func(d float64) bool { return len(MedianNDTIDrop(cells, d)) > 0 })
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

// TestPlainMaxT: on one short series the bisection lands on the largest
// drop of a 0.001 grid at which MedianNDTIDrop fires (within the grid
// step), and is −Inf on a series that never fires.
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
		grid := math.Inf(-1)
		for i := -1000; i <= 1000; i++ {
			if d := float64(i) / 1000; len(MedianNDTIDrop(c.cells, d)) > 0 {
				grid = max(grid, d)
			}
		}
		got := plainMaxT(c.cells)
		if !math.IsInf(grid, -1) && (got < grid-1e-9 || got > grid+0.001) {
			t.Errorf("%s: plainMaxT = %.7f, largest firing grid drop %.3f", c.name, got, grid)
		}
		if len(MedianNDTIDrop(c.cells, -1)) == 0 && !math.IsInf(got, -1) {
			t.Errorf("%s: plainMaxT = %v on a series that never fires, want −Inf", c.name, got)
		}
		if !math.IsInf(got, -1) && len(MedianNDTIDrop(c.cells, got)) == 0 {
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
