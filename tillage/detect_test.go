package tillage

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/spectral"
)

// series builds 5-day observations from start with the (NDVI, NDTI) given
// by f(day), plus Gaussian noise of sd in both indices (fixed seed).
func series(start time.Time, n int, sd float64, f func(i int) [2]float64) []Obs {
	rng := rand.New(rand.NewPCG(7, 7))
	out := make([]Obs, n)
	for i := range out {
		v := f(i)
		out[i] = Obs{Date: start.AddDate(0, 0, 5*i), NDVI: v[0] + sd*rng.NormFloat64(), NDTI: v[1] + sd*rng.NormFloat64()}
	}
	return out
}

// mix returns the indices of a mixture of the default endmembers, weighting
// by band brightness as Params.Green/Straw/Soil describe.
func mix(g, s float64) [2]float64 { return mixOf(DefaultParams(), g, s) }

// mixOf is mix with p's endmembers.
func mixOf(p Params, g, s float64) [2]float64 {
	b := 1 - g - s
	gr, st, so := p.Green, p.Straw, p.Soil
	ndvi := (g*gr.VNIR*gr.NDVI + s*st.VNIR*st.NDVI + b*so.VNIR*so.NDVI) / (g*gr.VNIR + s*st.VNIR + b*so.VNIR)
	ndti := (g*gr.SWIR*gr.NDTI + s*st.SWIR*st.NDTI + b*so.SWIR*so.NDTI) / (g*gr.SWIR + s*st.SWIR + b*so.SWIR)
	return [2]float64{ndvi, ndti}
}

// Fractions inverts the mixing exactly for the pure endmembers and any
// straw/soil mixture, and for green mixed over straw and soil on the dry
// line (spectral.NewDry); green over the reference straw and soil, darker
// in NDVI than that line, reads as less green (the dry line's price).
func TestFractionsRoundTrip(t *testing.T) {
	p := DefaultParams()
	u, _ := spectral.NewDry(p.Green, p.Straw, p.Soil)
	dry := p
	dry.Straw.NDVI, dry.Soil.NDVI = u.DryNDVI(), u.DryNDVI()
	for _, tc := range []struct{ g, s float64 }{{0, 0}, {1, 0}, {0, 1}, {0, 0.5}, {0, 0.1}, {0.3, 0.5}, {0.1, 0.1}, {0.6, 0.2}} {
		m := mixOf(dry, tc.g, tc.s)
		if tc.g == 0 {
			m = mix(tc.g, tc.s)
		}
		g, s, b := p.Fractions(m[0], m[1])
		if math.Abs(g-tc.g) > 1e-9 || math.Abs(s-tc.s) > 1e-9 || math.Abs(b-(1-tc.g-tc.s)) > 1e-9 {
			t.Errorf("Fractions(mix(%.1f, %.1f)) = %.4f %.4f %.4f", tc.g, tc.s, g, s, b)
		}
		if tc.g > 0 && tc.g < 1 {
			m = mix(tc.g, tc.s)
			if g, _, _ := p.Fractions(m[0], m[1]); !(g < tc.g) {
				t.Errorf("Fractions(mix(%.1f, %.1f)) over the reference straw and soil: green %.4f, want less than mixed", tc.g, tc.s, g)
			}
		}
	}
	if g, _, _ := p.Fractions(math.NaN(), 0.1); !math.IsNaN(g) {
		t.Errorf("Fractions(NaN) = %v, want NaN", g)
	}
}

func TestDetectCellScenarios(t *testing.T) {
	start := time.Date(2022, 6, 1, 0, 0, 0, 0, time.UTC)
	p := DefaultParams()
	const sd = 0.01
	tillDay := 30 // observation index of the first tilled observation
	for _, tc := range []struct {
		name  string
		f     func(i int) [2]float64
		want  int       // number of breaks
		after time.Time // After of the first break when want > 0
	}{
		{"tillage of straw (straw 0.8 → 0.1, NDVI low)", func(i int) [2]float64 {
			if i < tillDay {
				return mix(0, 0.8)
			}
			if i < tillDay+10 {
				return mix(0, 0.1)
			}
			return mix(0.8, 0.05) // the next crop
		}, 1, start.AddDate(0, 0, 5*tillDay)},
		{"harvest: green canopy → straw", func(i int) [2]float64 {
			if i < tillDay {
				return mix(0.9, 0.05)
			}
			return mix(0, 0.7)
		}, 0, time.Time{}},
		{"soybean harvest leaving little straw (soil 0.5)", func(i int) [2]float64 {
			if i < tillDay {
				return mix(0.9, 0.05)
			}
			return mix(0, 0.5)
		}, 0, time.Time{}},
		{"green-up over straw", func(i int) [2]float64 {
			if i < tillDay {
				return mix(0, 0.7)
			}
			g := math.Min(0.9, 0.05*float64(i-tillDay))
			return mix(g, 0.7*(1-g))
		}, 0, time.Time{}},
		{"single-date unflagged cloud over straw", func(i int) [2]float64 {
			if i == tillDay {
				return [2]float64{0.05, 0.06} // thin cloud: NDVI and NDTI collapse
			}
			return mix(0, 0.75)
		}, 0, time.Time{}},
		{"single-date shadow-like dip to soil", func(i int) [2]float64 {
			if i == tillDay {
				return mix(0, 0.05)
			}
			return mix(0, 0.75)
		}, 0, time.Time{}},
		{"chisel of heavy straw (straw 0.85 → 0.40, soil only 0.60)", func(i int) [2]float64 {
			if i < tillDay {
				return mix(0, 0.85)
			}
			return mix(0, 0.40)
		}, 1, start.AddDate(0, 0, 5*tillDay)},
		{"ploughing days before sowing: first clear date already green 0.3", func(i int) [2]float64 {
			if i < tillDay {
				return mix(0, 0.8)
			}
			g := math.Min(0.9, 0.3+0.05*float64(i-tillDay))
			return mix(g, 0.1*(1-g))
		}, 1, start.AddDate(0, 0, 5*tillDay)},
		{"soybean harvest: senescent canopy (reads as straw) → ground straw 0.55", func(i int) [2]float64 {
			switch {
			case i < tillDay-6:
				return mix(0.9, 0.05)
			case i < tillDay:
				return mix(0, 0.95)
			}
			return mix(0, 0.55)
		}, 0, time.Time{}},
		{"soybean harvest, safrinha sown at once into little straw (r 0.95 → 0.38)", func(i int) [2]float64 {
			switch {
			case i < tillDay-6:
				return mix(0.9, 0.05)
			case i < tillDay:
				return mix(0, 0.95)
			}
			g := math.Min(0.9, 0.15+0.05*float64(i-tillDay))
			return mix(g, 0.38*(1-g))
		}, 0, time.Time{}},
		{"weed flush over straw, desiccated", func(i int) [2]float64 {
			g := 0.0
			if i >= tillDay-10 && i < tillDay {
				g = 0.3
			}
			return mix(g, 0.6*(1-g))
		}, 0, time.Time{}},
		{"slow straw decay to soil", func(i int) [2]float64 {
			return mix(0, 0.8*math.Exp(-float64(5*i)/60))
		}, 0, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			br := DetectCell(series(start, 60, sd, tc.f), p)
			if len(br) != tc.want {
				t.Fatalf("DetectCell = %d breaks %+v, want %d", len(br), br, tc.want)
			}
			if tc.want > 0 {
				b := br[0]
				if !b.After.Equal(tc.after) || !b.Date.Equal(b.After) || !b.Before.Equal(tc.after.AddDate(0, 0, -5)) {
					t.Errorf("break dated %s (%s..%s), want After %s", b.Date.Format(time.DateOnly), b.Before.Format(time.DateOnly), b.After.Format(time.DateOnly), tc.after.Format(time.DateOnly))
				}
				if b.MagnitudeSigma <= p.K {
					t.Errorf("MagnitudeSigma = %.1f, want > K = %.1f", b.MagnitudeSigma, p.K)
				}
			}
		})
	}
}

// TestDetectCellCloudyGap: a tillage hidden by a 40-day cloudy gap is dated
// by the first clear observation after it, with Before the last one before.
func TestDetectCellCloudyGap(t *testing.T) {
	start := time.Date(2022, 6, 1, 0, 0, 0, 0, time.UTC)
	obs := series(start, 60, 0.01, func(i int) [2]float64 {
		if i < 25 {
			return mix(0, 0.8)
		}
		return mix(0, 0.08)
	})
	for i := 22; i < 30; i++ { // tillage at i = 25, clouds 22..29
		obs[i].NDVI, obs[i].NDTI = math.NaN(), math.NaN()
	}
	// Unsorted input is accepted.
	obs[0], obs[59] = obs[59], obs[0]
	br := DetectCell(obs, DefaultParams())
	if len(br) != 1 {
		t.Fatalf("DetectCell = %d breaks, want 1", len(br))
	}
	if want := start.AddDate(0, 0, 5*30); !br[0].After.Equal(want) {
		t.Errorf("After = %s, want %s", br[0].After.Format(time.DateOnly), want.Format(time.DateOnly))
	}
	if want := start.AddDate(0, 0, 5*21); !br[0].Before.Equal(want) {
		t.Errorf("Before = %s, want %s", br[0].Before.Format(time.DateOnly), want.Format(time.DateOnly))
	}
}

func TestDetectCellNoNDTI(t *testing.T) {
	obs := series(time.Date(2022, 6, 1, 0, 0, 0, 0, time.UTC), 60, 0.01, func(i int) [2]float64 {
		if i < 30 {
			return [2]float64{0.8, math.NaN()}
		}
		return [2]float64{0.2, math.NaN()}
	})
	if br := DetectCell(obs, DefaultParams()); br != nil {
		t.Errorf("DetectCell without NDTI = %v, want nil", br)
	}
}

// TestDetectTalhao: IN 2.3 III — revolving at the headland (border cells)
// alone is no event; half the interior cells make one.
func TestDetectTalhao(t *testing.T) {
	start := time.Date(2022, 6, 1, 0, 0, 0, 0, time.UTC)
	tilled := series(start, 60, 0.01, func(i int) [2]float64 {
		if i < 30 {
			return mix(0, 0.8)
		}
		return mix(0, 0.08)
	})
	still := series(start, 60, 0.01, func(int) [2]float64 { return mix(0, 0.8) })
	mk := func(nTilledInt, nInt, nTilledBorder, nBorder int) []Cell {
		var cs []Cell
		for i := 0; i < nInt; i++ {
			o := still
			if i < nTilledInt {
				o = tilled
			}
			cs = append(cs, Cell{ID: "i", Obs: o})
		}
		for i := 0; i < nBorder; i++ {
			o := still
			if i < nTilledBorder {
				o = tilled
			}
			cs = append(cs, Cell{ID: "b", Border: true, Obs: o})
		}
		return cs
	}
	for _, tc := range []struct {
		name              string
		cells             []Cell
		events            int
		frac              float64
		nCells, nInterior int
	}{
		{"all cells tilled", mk(6, 6, 4, 4), 1, 1, 10, 6},
		{"half the interior cells", mk(3, 6, 0, 4), 1, 0.3, 3, 3},
		{"under half the interior cells", mk(2, 6, 0, 4), 0, 0, 0, 0},
		{"border cells only (headland, IN 2.3 III)", mk(0, 6, 4, 4), 0, 0, 0, 0},
		{"no interior cells at all", mk(0, 0, 4, 4), 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := Detect(tc.cells, DefaultParams())
			if len(ev) != tc.events {
				t.Fatalf("Detect = %d events, want %d", len(ev), tc.events)
			}
			if tc.events == 0 {
				return
			}
			e := ev[0]
			if math.Abs(e.CellFraction-tc.frac) > 1e-9 || e.NCells != tc.nCells || e.NInterior != tc.nInterior {
				t.Errorf("event fraction %.2f cells %d interior %d, want %.2f %d %d", e.CellFraction, e.NCells, e.NInterior, tc.frac, tc.nCells, tc.nInterior)
			}
			if want := start.AddDate(0, 0, 150); !e.Date.Equal(want) || !e.After.Equal(want) || !e.Before.Equal(want.AddDate(0, 0, -5)) {
				t.Errorf("event dated %s (%s..%s), want %s", e.Date.Format(time.DateOnly), e.Before.Format(time.DateOnly), e.After.Format(time.DateOnly), want.Format(time.DateOnly))
			}
			if e.Operation != "" {
				t.Errorf("Operation = %q, want \"\" (no justified guess)", e.Operation)
			}
		})
	}
}

// TestMedian checks the quickselect median against a full sort, odd and
// even lengths, with ties.
func TestMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for _, n := range []int{1, 2, 3, 32, 33, 34, 100, 101, 1000, 1001} {
		for rep := 0; rep < 20; rep++ {
			v := make([]float64, n)
			for i := range v {
				v[i] = math.Round(10*rng.NormFloat64()) / 10 // ties
			}
			s := append([]float64(nil), v...)
			sort.Float64s(s)
			want := s[n/2]
			if n%2 == 0 {
				want = (s[n/2-1] + s[n/2]) / 2
			}
			if got := num.Median(v); got != want {
				t.Fatalf("n=%d: median = %v, want %v", n, got, want)
			}
		}
	}
	if !math.IsNaN(num.Median(nil)) {
		t.Error("num.Median(nil) is not NaN")
	}
}
