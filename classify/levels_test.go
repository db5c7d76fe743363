package classify

import (
	"fmt"
	"math"
	"testing"

	"github.com/manejo/manejo/zarc"
)

// bound is one threshold of Tabela 1 (IN SPA/MAPA 2/2025, annex, item 2.1):
// the level just below it and the level at it (bounds belong to the upper
// interval: "35 ≤ V < 40").
type bound struct {
	at          float64
	below, atIs int
}

// walk checks f just below, at and just above every bound.
func walk(t *testing.T, row string, f func(float64) int, bounds []bound) {
	t.Helper()
	for _, b := range bounds {
		for _, c := range []struct {
			x    float64
			want int
		}{
			{b.at - 0.01, b.below},
			{math.Nextafter(b.at, math.Inf(-1)), b.below},
			{b.at, b.atIs},
			{b.at + 0.01, b.atIs},
		} {
			t.Run(fmt.Sprintf("%s/%v", row, c.x), func(t *testing.T) {
				if got := f(c.x); got != c.want {
					t.Errorf("%s(%v) = %d, want %d", row, c.x, got, c.want)
				}
			})
		}
	}
}

// TestTabela1 walks every row of Tabela 1 on both sides of every bound. These
// bounds are also those of tillage's and coverage's levels of T and C; the
// lead dedupes later, this test documents them.
func TestTabela1(t *testing.T) {
	t.Parallel()
	// Row 1, V% in 0–20 cm, CTC < 5: V < 35 | 35 ≤ V < 40 | 40 ≤ V < 50 | V ≥ 50.
	for _, ctc := range []float64{0.5, 4.99, math.Nextafter(5, 0)} {
		walk(t, fmt.Sprintf("V%%(CTC=%v)", ctc), func(v float64) int { return VLevel(ctc, v) },
			[]bound{{35, 1, 2}, {40, 2, 3}, {50, 3, 4}})
	}
	// Row 1, 5 ≤ CTC < 10: V < 40 | 40 ≤ V < 45 | 45 ≤ V < 55 | V ≥ 55.
	for _, ctc := range []float64{5, 7.5, 9.99} {
		walk(t, fmt.Sprintf("V%%(CTC=%v)", ctc), func(v float64) int { return VLevel(ctc, v) },
			[]bound{{40, 1, 2}, {45, 2, 3}, {55, 3, 4}})
	}
	// Row 1, CTC ≥ 10: V < 50 | 50 ≤ V < 55 | 55 ≤ V < 65 | V ≥ 65.
	for _, ctc := range []float64{10, 10.01, 25} {
		walk(t, fmt.Sprintf("V%%(CTC=%v)", ctc), func(v float64) int { return VLevel(ctc, v) },
			[]bound{{50, 1, 2}, {55, 2, 3}, {65, 3, 4}})
	}
	// Row 2, Ca in 20–40 cm (cmolc dm⁻³): Ca < 0,5 | 0,5 ≤ Ca < 1 | 1 ≤ Ca < 1,5 | Ca ≥ 1,5.
	walk(t, "Ca", CaLevel, []bound{{0.5, 1, 2}, {1, 2, 3}, {1.5, 3, 4}})
	// Row 3, m% in 20–40 cm: m ≥ 20 → 1 | 10 ≤ m < 20 → 2 | 5 ≤ m < 10 → 3 | m < 5 → 4.
	walk(t, "m%", MLevel, []bound{{5, 4, 3}, {10, 3, 2}, {20, 2, 1}})
	// Row 4, T (years): T < 3 | 3 ≤ T < 5 | 5 ≤ T < 8 | T ≥ 8.
	walk(t, "T", zarc.TLevel, []bound{{3, 1, 2}, {5, 2, 3}, {8, 3, 4}})
	// Row 5, C (%): 0 ≤ C < 30 | 30 ≤ C < 60 | 60 ≤ C < 90 | C ≥ 90.
	walk(t, "C", zarc.CLevel, []bound{{30, 1, 2}, {60, 2, 3}, {90, 3, 4}})
}

// TestTabela1Extremes checks the ends of each row and the CTC class bounds.
func TestTabela1Extremes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"V%=0 CTC<5 (row 1)", VLevel(3, 0), 1},
		{"V%=100 CTC≥10 (row 1)", VLevel(30, 100), 4},
		{"V%=45 at CTC 4.99 is level 3 (40 ≤ V < 50)", VLevel(4.99, 45), 3},
		{"V%=45 at CTC 5 is level 3 (45 ≤ V < 55)", VLevel(5, 45), 3},
		{"V%=42 at CTC 4.99 is level 3, at CTC 5 level 2", VLevel(4.99, 42) - VLevel(5, 42), 1},
		{"V%=52 at CTC 9.99 is level 3, at CTC 10 level 2", VLevel(9.99, 52) - VLevel(10, 52), 1},
		{"Ca=0 (row 2)", CaLevel(0), 1},
		{"m%=0 (row 3)", MLevel(0), 4},
		{"m%=100 (row 3)", MLevel(100), 1},
		{"T=0 (row 4)", zarc.TLevel(0), 1},
		{"T=40 (row 4)", zarc.TLevel(40), 4},
		{"C=0 (row 5)", zarc.CLevel(0), 1},
		{"C=100 (row 5)", zarc.CLevel(100), 4},
		{"NaN V%", VLevel(8, math.NaN()), 0},
		{"NaN CTC", VLevel(math.NaN(), 50), 0},
		{"NaN Ca", CaLevel(math.NaN()), 0},
		{"NaN m%", MLevel(math.NaN()), 0},
		{"NaN T", zarc.TLevel(math.NaN()), 0},
		{"NaN C", zarc.CLevel(math.NaN()), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
			}
		})
	}
}

// TestBand checks the Mi bands of IN 3.2 I–IV on both sides of each bound,
// and every mean six integer points can give (k/6, k = 6..24).
func TestBand(t *testing.T) {
	t.Parallel()
	walkMi := []struct {
		mi   float64
		want int
	}{
		{1, 1},
		{1.75, 1}, // I - NM1 se Mi ≤ 1,75
		{math.Nextafter(1.75, 2), 2},
		{1.76, 2},
		{2.75, 2}, // II - NM2 se 1,75 < Mi ≤ 2,75
		{math.Nextafter(2.75, 3), 3},
		{2.76, 3},
		{3.50, 3}, // III - NM3 se 2,75 < Mi ≤ 3,50
		{math.Nextafter(3.5, 4), 4},
		{3.51, 4}, // IV - NM4 se Mi > 3,50
		{4, 4},
		{math.NaN(), 0},
	}
	for _, tt := range walkMi {
		t.Run(fmt.Sprint(tt.mi), func(t *testing.T) {
			if got := Band(tt.mi); got != tt.want {
				t.Errorf("Band(%v) = %d, want %d", tt.mi, got, tt.want)
			}
		})
	}
	// Sums of six points: ≤10 → NM1 (10/6 = 1.67), 11..16 → NM2 (16/6 = 2.67),
	// 17..21 → NM3 (21/6 = 3.5 exactly), ≥22 → NM4.
	for sum := 6; sum <= 24; sum++ {
		want := 4
		switch {
		case sum <= 10:
			want = 1
		case sum <= 16:
			want = 2
		case sum <= 21:
			want = 3
		}
		if got := Band(float64(sum) / 6); got != want {
			t.Errorf("Band(%d/6 = %v) = %d, want %d", sum, float64(sum)/6, got, want)
		}
	}
}
