package tillage

import (
	"math"
	"testing"
	"time"
)

// TestTrendFit: trendFit recovers the step of a line plus a step exactly,
// reads no step on a line alone, and gives the step's variance of an
// indicator split 3 / 3 with a slope fitted (x = 0..5 split at 3: Σd̃² =
// Sdd − Sxd²/Sxx = 1.5 − 4.5²/17.5 = 12/35, so 35/12).
func TestTrendFit(t *testing.T) {
	xs := []float64{-50, -40, -30, -20, -10, 0, 10, 20, 30, 40}
	after := make([]bool, len(xs))
	ys := make([]float64, len(xs))
	line := make([]float64, len(xs))
	for i, x := range xs {
		after[i] = x >= 0
		line[i] = 0.2 - 0.0002*x
		ys[i] = line[i]
		if after[i] {
			ys[i] -= 0.03
		}
	}
	if a, b, c, _ := trendFit(xs, ys, after); math.Abs(c+0.03) > 1e-12 || math.Abs(a-0.2) > 1e-12 || math.Abs(b+0.0002) > 1e-12 {
		t.Errorf("step on a line: a, b, c = %g, %g, %g, want 0.2, -0.0002, -0.03", a, b, c)
	}
	if _, _, c, _ := trendFit(xs, line, after); math.Abs(c) > 1e-12 {
		t.Errorf("line alone: c = %g, want 0", c)
	}
	_, _, _, v := trendFit([]float64{0, 1, 2, 3, 4, 5}, make([]float64, 6), []bool{false, false, false, true, true, true})
	if math.Abs(v-35.0/12) > 1e-12 {
		t.Errorf("Var(c)/σ² = %g, want 35/12", v)
	}
	if _, _, _, v := trendFit([]float64{0, 1, 2}, make([]float64, 3), []bool{true, true, true}); !math.IsInf(v, 1) {
		t.Errorf("no date before: Var(c)/σ² = %g, want +Inf", v)
	}
}

// TestTrendStep: on a bare series weathering 0.0002 NDTI a day, a
// tillage of 0.03 on day 60 is a drop of 0.03 on top of the trend (its
// two flat levels read more: the slope adds to it), the series without
// it no drop; a hazy date 10σ off the line is left out of the fit.
func TestTrendStep(t *testing.T) {
	t0 := time.Date(2021, 11, 1, 0, 0, 0, 0, time.UTC)
	var s []stepObs
	var pl []pooledObs
	for d := 0; d <= 150; d += 8 {
		y := 0.2 - 0.0002*float64(d)
		if d >= 60 {
			y -= 0.03
		}
		if d == 16 {
			y += 0.05
		}
		s = append(s, stepObs{date: t0.AddDate(0, 0, d), ndti: y, sensor: "a"})
		pl = append(pl, pooledObs{Obs: Obs{Date: t0.AddDate(0, 0, d), NDTI: y, NDVI: 0.1}})
	}
	j := 0
	for s[j].date.Before(t0.AddDate(0, 0, 60)) {
		j++
	}
	tu := tuning{}.withDefaults()
	drop, se, ok := trendStep(s, j, pl, 0.005, 200, &tu)
	if !ok || math.Abs(drop-0.03) > 1e-9 || !(se > 0) {
		t.Errorf("step on a ramp: drop %g ± %g (ok %v), want 0.03", drop, se, ok)
	}
	for i := range s {
		if !s[i].date.Before(s[j].date) {
			s[i].ndti += 0.03
		}
	}
	if drop, _, ok := trendStep(s, j, pl, 0.005, 200, &tu); !ok || math.Abs(drop) > 1e-9 {
		t.Errorf("ramp alone: drop %g (ok %v), want 0", drop, ok)
	}
}
