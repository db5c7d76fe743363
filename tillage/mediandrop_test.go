package tillage

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/manejo/manejo/spectral"
)

// Surfaces of the median-drop tests (reflectances): a bright sandy neosol
// whose NDTI (0.086) lies near the straw's, a fresh soybean straw (NDTI
// 0.29) and a green canopy.
var (
	sandySoil  = spectral.Spectrum{Red: 0.23, NIR: 0.28, SWIR1: 0.38, SWIR2: 0.32}
	freshStraw = spectral.Spectrum{Red: 0.17, NIR: 0.25, SWIR1: 0.38, SWIR2: 0.21}
	canopy     = spectral.Spectrum{Red: 0.035, NIR: 0.46, SWIR1: 0.22, SWIR2: 0.10}
)

// surface is a day's ground: green canopy and straw fractions (the rest
// soil) and wetness 0..1 (darkens straw and soil, SWIR most; wet straw
// loses NDTI).
type surface struct{ green, straw, wet float64 }

// mixedCells returns nCells interior cells observed every 5 days for n
// dates from start, each a linear mixture of canopy, straw and soil with
// 1 % reflectance noise per band and cell (fixed seed).
func mixedCells(start time.Time, n, nCells int, soil spectral.Spectrum, f func(day int) surface) []Cell {
	rng := rand.New(rand.NewPCG(17, 3))
	cells := make([]Cell, nCells)
	for c := range cells {
		cells[c].ID = string(rune('a' + c))
		for i := range n {
			s := f(5 * i)
			ws := [4]float64{1 - 0.25*s.wet, 1 - 0.25*s.wet, 1 - 0.45*s.wet, 1 - 0.32*s.wet}
			wo := [4]float64{1 - 0.25*s.wet, 1 - 0.25*s.wet, 1 - 0.45*s.wet, 1 - 0.45*s.wet}
			b := 1 - s.green - s.straw
			var r [4]float64
			for k, x := range [][3]float64{
				{canopy.Red, freshStraw.Red, soil.Red}, {canopy.NIR, freshStraw.NIR, soil.NIR},
				{canopy.SWIR1, freshStraw.SWIR1, soil.SWIR1}, {canopy.SWIR2, freshStraw.SWIR2, soil.SWIR2},
			} {
				r[k] = (s.green*x[0] + s.straw*x[1]*ws[k] + b*x[2]*wo[k]) * (1 + 0.01*rng.NormFloat64())
			}
			cells[c].Obs = append(cells[c].Obs, Obs{
				Date: start.AddDate(0, 0, 5*i), NDVI: (r[1] - r[0]) / (r[1] + r[0]), NDTI: (r[2] - r[3]) / (r[2] + r[3]),
				Red: r[0], NIR: r[1], SWIR1: r[2], SWIR2: r[3],
			})
		}
	}
	return cells
}

// TestMedianDrop checks the third test of Detect (Portaria 349 6.8: a
// structural break beyond the historical standard-deviation threshold,
// validated by NDTI) on a sandy soil: a chisel pass is an event, dated by
// its interval, and the surfaces that lower NDTI without revolving the
// soil — a wet spell, residue decaying, a harvest — are not.
func TestMedianDrop(t *testing.T) {
	start := time.Date(2021, 5, 1, 0, 0, 0, 0, time.UTC)
	const tillDay = 300 // a chisel pass between dates 295 and 300
	for _, tc := range []struct {
		name string
		f    func(day int) surface
		want int
	}{
		{"chisel pass keeps 40 % of the straw", func(d int) surface {
			if d >= tillDay {
				return surface{straw: 0.3}
			}
			return surface{straw: 0.75}
		}, 1},
		{"wet spell: every date from day 300 half wet", func(d int) surface {
			if d >= tillDay {
				return surface{straw: 0.75, wet: 0.5}
			}
			return surface{straw: 0.75}
		}, 0},
		{"residue decaying 0.8 → 0.35 over 120 days", func(d int) surface {
			x := min(1, max(0, float64(d-240)/120))
			return surface{straw: 0.8 - 0.45*x}
		}, 0},
		{"residue decaying 0.8 → 0.35 within 25 days (under 0.4 of the way per step)", func(d int) surface {
			x := min(1, max(0, float64(d-280)/25))
			return surface{straw: 0.8 - 0.45*x}
		}, 0},
		{"soybean canopy harvested on day 300, 55 % residue", func(d int) surface {
			switch {
			case d < 260:
				return surface{green: 0.9}
			case d < tillDay:
				return surface{green: 0.9 * float64(tillDay-d) / 40, straw: 0.9 * float64(d-260) / 40}
			}
			return surface{straw: 0.55}
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cells := mixedCells(start, 146, 6, sandySoil, tc.f)
			p := Calibrate(cells, DefaultParams())
			p.tune = p.tune.withDefaults()
			var interior [][]Obs
			for _, c := range cells {
				interior = append(interior, c.Obs)
			}
			got := medianDropBreaks(pooled(interior), p)
			if len(got) != tc.want {
				t.Fatalf("median-drop breaks %v, want %d", got, tc.want)
			}
			ev := Detect(cells, DefaultParams())
			if tc.want == 0 {
				if len(ev) != 0 {
					t.Errorf("Detect: %d events (first %s), want none", len(ev), ev[0].Date.Format(time.DateOnly))
				}
				return
			}
			till := start.AddDate(0, 0, tillDay)
			if b := got[0]; b.Before.After(till) || b.After.Before(till) || !(b.MagnitudeSigma > 3) {
				t.Errorf("break %s..%s z %.1f, want the interval to hold %s and z > K", b.Before.Format(time.DateOnly), b.After.Format(time.DateOnly), b.MagnitudeSigma, till.Format(time.DateOnly))
			}
			if len(ev) != 1 || !ev[0].Date.Equal(till) {
				t.Errorf("Detect: %v, want one event on %s", ev, till.Format(time.DateOnly))
			}
		})
	}
}

// TestWetDateAndCanopy checks the two guards of the median-drop test on a
// pooled series: a date whose median SWIR1+SWIR2 dips below 0.9 of the
// ±20-day median is wet (none without reflectances), and a median NDVI ≥
// 0.4 within 45 days before a date is a canopy.
func TestWetDateAndCanopy(t *testing.T) {
	start := time.Date(2022, 9, 1, 0, 0, 0, 0, time.UTC)
	pl := make([]pooledObs, 9)
	for i := range pl {
		pl[i] = pooledObs{Obs: Obs{Date: start.AddDate(0, 0, 5*i), NDVI: 0.2, NDTI: 0.2}, swir: 0.6}
	}
	pl[4].swir = 0.53 // 0.883 of the others
	pl[6].swir = 0.55 // 0.917: not wet
	tu := tuning{}.withDefaults()
	for i := range pl {
		if got, want := wetDate(pl, i, tu.mdWet), i == 4; got != want {
			t.Errorf("wetDate(%d) = %v, want %v", i, got, want)
		}
	}
	pl[4].swir = 0
	if wetDate(pl, 4, tu.mdWet) {
		t.Error("a date without reflectances is wet")
	}
	pl[2].NDVI = 0.4
	for _, tc := range []struct {
		day  int
		want bool
	}{{10, false}, {11, true}, {55, true}, {56, false}} {
		if got := canopyBefore(pl, start.AddDate(0, 0, tc.day), &tu); got != tc.want {
			t.Errorf("canopyBefore(day %d) = %v, want %v (canopy on day 10, guard 45 days)", tc.day, got, tc.want)
		}
	}
}
