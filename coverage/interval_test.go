package coverage

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
)

// Every season and C carry an interval around the estimate, and C's level
// is flagged uncertain exactly when its interval crosses a Tabela 1 limit
// (IN 2/2025 Tabela 1: C < 30, 30–60, 60–90, ≥ 90 %).
func TestAssessIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	flagged := 0
	for k := 0; k < 6; k++ {
		f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 6, crop: pheno.Soja, cloudScale: 1, spectra: pheno.Spectra(k % 2)})
		c := Assess(f.cells, contract, nil, zarc.Soja, Params{})
		if !c.OK {
			continue
		}
		for _, s := range c.Seasons {
			if !(s.CoverLo <= s.CoverPct && s.CoverPct <= s.CoverHi && s.CoverLo >= 0 && s.CoverHi <= 100) {
				t.Errorf("field %d %s: cover %.1f outside its interval %.1f–%.1f", k, s.Season.Label, s.CoverPct, s.CoverLo, s.CoverHi)
			}
		}
		if !(c.PctLo <= c.Pct && c.Pct <= c.PctHi) {
			t.Errorf("field %d: C %.1f outside %.1f–%.1f", k, c.Pct, c.PctLo, c.PctHi)
		}
		if want := zarc.CLevel(c.PctLo) != zarc.CLevel(c.PctHi); c.LevelUncertain != want {
			t.Errorf("field %d: C %.1f (%.1f–%.1f) LevelUncertain %v, want %v", k, c.Pct, c.PctLo, c.PctHi, c.LevelUncertain, want)
		}
		if c.LevelUncertain {
			flagged++
		}
	}
	if flagged == 0 {
		t.Error("no talhão flagged: the check is vacuous")
	}
	// With the endmembers given, no calibration: the interval is the cells' sampling error only.
	f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 6, crop: pheno.Soja, cloudScale: 1})
	c := Assess(f.cells, contract, nil, zarc.Soja, Params{StrawNDTI: 0.241})
	if c.OK && c.PctHi-c.PctLo > 10 {
		t.Errorf("given endmembers: C interval %.1f–%.1f wider than the sampling error", c.PctLo, c.PctHi)
	}
}

// UnmixReadings returns one fraction triple per reading, NaN for masked
// readings, summing to one, and the same straw the season cover reads.
func TestUnmixReadingsAligned(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 4, crop: pheno.Soja, cloudScale: 1})
	fr := UnmixReadings(f.cells, Params{})
	if len(fr) != len(f.cells) {
		t.Fatalf("%d cells, want %d", len(fr), len(f.cells))
	}
	for i, cell := range f.cells {
		if len(fr[i]) != len(cell) {
			t.Fatalf("cell %d: %d readings, want %d", i, len(fr[i]), len(cell))
		}
		for j, o := range cell {
			x := fr[i][j]
			if math.IsNaN(o.NDVI) != math.IsNaN(x.Straw) {
				t.Fatalf("cell %d reading %d: NDVI %v but straw %v", i, j, o.NDVI, x.Straw)
			}
			if !math.IsNaN(x.Straw) && math.Abs(x.Green+x.Straw+x.Soil-1) > 1e-9 {
				t.Fatalf("cell %d reading %d: fractions sum to %v", i, j, x.Green+x.Straw+x.Soil)
			}
		}
	}
}
