package testkit

import (
	"math"
	"testing"
)

func TestThresholdAtFP(t *testing.T) {
	inf := math.Inf(-1)
	neg := []float64{0.02, 0.08, 0.05, 0.05, inf}
	cases := []struct {
		name    string
		neg     []float64
		fp      int
		want    float64
		flagged int // negatives with a score above want
	}{
		{"FPR 0: the largest", neg, 0, 0.08, 0},
		{"one false positive", neg, 1, 0.05, 1},
		{"tie: both 0.05 stay unflagged", neg, 2, 0.05, 1},
		{"past the tie", neg, 3, 0.02, 3},
		{"a never-firing negative is the threshold", neg, 4, inf, 4},
		{"FPR 1: every unit that fires", neg, 5, inf, 4},
		{"fp beyond n", neg, 9, inf, 4},
		{"none fires, FPR 0", []float64{inf, inf, inf}, 0, inf, 0},
		{"none fires, FPR 1", []float64{inf, inf, inf}, 3, inf, 0},
		{"no negatives", nil, 0, inf, 0},
		// cmd/manejo's US harness: FPR 1/4 flags only 0.10.
		{"US scoring, FPR 1/4", []float64{0.10, 0.02, 0.05, inf}, 1, 0.05, 1},
		{"US scoring, FPR 0", []float64{0.10, 0.02, 0.05, inf}, 0, 0.10, 0},
	}
	for _, c := range cases {
		in := append([]float64(nil), c.neg...)
		got := ThresholdAtFP(in, c.fp)
		if got != c.want {
			t.Errorf("%s: ThresholdAtFP(%v, %d) = %v, want %v", c.name, c.neg, c.fp, got, c.want)
		}
		var flagged int
		for _, m := range c.neg {
			if m > got {
				flagged++
			}
		}
		if flagged != c.flagged || flagged > c.fp {
			t.Errorf("%s: %d negatives flagged at %v, want %d (≤ fp %d)", c.name, flagged, got, c.flagged, c.fp)
		}
		for i := range in {
			if in[i] != c.neg[i] {
				t.Fatalf("%s: ThresholdAtFP reordered its input", c.name)
			}
		}
	}
}

// TestLargestFiring: a rule firing below an edge is found within 2⁻²⁹
// under it, and fires there; one that never fires is −Inf; one firing
// everywhere on [−1, 1] is within 2⁻²⁹ of 1. The rule is called 31 times.
func TestLargestFiring(t *testing.T) {
	for _, edge := range []float64{0.0625, 0.0731234567, -0.5, -1 + 1e-6, 0.9999} {
		calls := 0
		fires := func(d float64) bool { calls++; return d < edge }
		got := LargestFiring(fires)
		if calls != 31 {
			t.Errorf("edge %v: %d calls, want 31", edge, calls)
		}
		if got >= edge || edge-got > 0x1p-29 || !fires(got) {
			t.Errorf("edge %v: LargestFiring = %.12f (%g below), want within 2⁻²⁹ below it, firing", edge, got, edge-got)
		}
	}
	if got := LargestFiring(func(float64) bool { return false }); !math.IsInf(got, -1) {
		t.Errorf("a rule that never fires: %v, want −Inf", got)
	}
	if got := LargestFiring(func(d float64) bool { return d <= -1 }); got != -1 {
		t.Errorf("a rule firing only at −1: %v, want −1 (it fires there)", got)
	}
	if got := LargestFiring(func(float64) bool { return true }); got >= 1 || 1-got > 0x1p-29 {
		t.Errorf("a rule that always fires: %v, want within 2⁻²⁹ below 1", got)
	}
}
