package coverage

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/spectral"
	"github.com/manejo/manejo/zarc"
)

// nearOrNaN is testkit.Near, except that a NaN want (no reading) is met
// only by a NaN.
func nearOrNaN(got, want, tol float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	return testkit.Near(got, want, tol)
}

// Portaria 349/2026 item 6.7: "histórico consolidado dos 3 (três) anos
// agrícolas anteriores ao ano da contratação".
func TestSeasonsAssessed(t *testing.T) {
	tests := []struct {
		name, label, start string
		want               []string
		firstStart         string
	}{
		{"default boundary", "2026/2027", "", []string{"2023/2024", "2024/2025", "2025/2026"}, "2023-07-01"},
		{"august boundary", "2026/2027", "08-01", []string{"2023/2024", "2024/2025", "2025/2026"}, "2023-08-01"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var md MonthDay
			if tc.start != "" {
				var err error
				if md, err = ParseMonthDay(tc.start); err != nil {
					t.Fatal(err)
				}
			}
			c, err := ParseSeason(tc.label, md)
			if err != nil {
				t.Fatal(err)
			}
			got := c.Assessed()
			for i, s := range got {
				if s.Label != tc.want[i] {
					t.Errorf("Assessed()[%d] = %s, want %s", i, s.Label, tc.want[i])
				}
				if !s.End.Equal(s.Start.AddDate(1, 0, 0)) {
					t.Errorf("%s: End %s is not Start + 1 year", s.Label, s.End)
				}
			}
			if got[0].Start.Format(time.DateOnly) != tc.firstStart {
				t.Errorf("first start %s, want %s", got[0].Start.Format(time.DateOnly), tc.firstStart)
			}
			if !got[2].End.Equal(c.Start) {
				t.Errorf("last assessed ends %s, want contract start %s", got[2].End, c.Start)
			}
		})
	}
}

func TestAgriYearBoundary(t *testing.T) {
	tests := []struct {
		day, start, want string
	}{
		{"2024-06-30", "07-01", "2023/2024"},
		{"2024-07-01", "07-01", "2024/2025"},
		{"2024-07-31", "08-01", "2023/2024"},
		{"2024-08-01", "08-01", "2024/2025"},
		{"2025-01-15", "07-01", "2024/2025"},
	}
	for _, tc := range tests {
		t.Run(tc.day+"@"+tc.start, func(t *testing.T) {
			md, err := ParseMonthDay(tc.start)
			if err != nil {
				t.Fatal(err)
			}
			if got := SeasonOf(day(tc.day), md).Label; got != tc.want {
				t.Errorf("SeasonOf(%s, %s) = %s, want %s", tc.day, tc.start, got, tc.want)
			}
			s, _ := ParseSeason(tc.want, md)
			if !s.Contains(day(tc.day)) {
				t.Errorf("%s does not contain %s", tc.want, tc.day)
			}
		})
	}
}

func TestParseSeasonErrors(t *testing.T) {
	for _, bad := range []string{"", "2026", "2026/2026", "2026/2028", "26/27", "abcd/efgh"} {
		if _, err := ParseSeason(bad, MonthDay{}); !errors.Is(err, ErrSeason) || !errors.Is(err, zarc.ErrAgriYear) {
			t.Errorf("ParseSeason(%q) error = %v, want ErrSeason and zarc.ErrAgriYear", bad, err)
		}
	}
	// One grammar for the agricultural year (zarc.ParseAgriYear): the other
	// spellings name the same season, with the canonical label.
	for _, ok := range []string{"2026/2027", "2026-2027", "2026/27", " 2026/2027 "} {
		if s, err := ParseSeason(ok, MonthDay{}); err != nil || s.Label != "2026/2027" {
			t.Errorf("ParseSeason(%q) = %q, %v, want 2026/2027", ok, s.Label, err)
		}
	}
	for _, bad := range []string{"", "7-1", "13-01", "02-29", "04-31", "00-10", "07/01"} {
		if _, err := ParseMonthDay(bad); !errors.Is(err, ErrMonthDay) {
			t.Errorf("ParseMonthDay(%q) error = %v, want ErrMonthDay", bad, err)
		}
	}
}

// Portaria 206/2026 item 3.3: periods 1..36, days 1–10, 11–20, 21–end
// (zarc.Decendio, the decêndio Sowing carries).
func TestDecendio(t *testing.T) {
	tests := []struct {
		day  string
		want int
	}{
		{"2025-01-01", 1}, {"2025-01-10", 1}, {"2025-01-11", 2}, {"2025-01-20", 2}, {"2025-01-21", 3}, {"2025-01-31", 3},
		{"2025-02-28", 6}, {"2024-02-29", 6}, {"2025-09-15", 26}, {"2025-10-01", 28}, {"2025-11-30", 33},
		{"2025-12-21", 36}, {"2025-12-31", 36},
	}
	for _, tc := range tests {
		if got := zarc.Decendio(day(tc.day)); got != tc.want {
			t.Errorf("zarc.Decendio(%s) = %d, want %d", tc.day, got, tc.want)
		}
	}
	if zarc.Decendio(time.Time{}) != 0 {
		t.Error("zarc.Decendio(zero) != 0")
	}
}

// Tabela 1 (IN 2/2025): 0 ≤ C < 30 → 1; 30 ≤ C < 60 → 2; 60 ≤ C < 90 → 3;
// C ≥ 90 → 4 (zarc.CLevel, the level C carries).
func TestLevel(t *testing.T) {
	tests := []struct {
		pct  float64
		want int
	}{{0, 1}, {29.999, 1}, {30, 2}, {59.9, 2}, {60, 3}, {89.99, 3}, {90, 4}, {100, 4}, {math.NaN(), 0}}
	for _, tc := range tests {
		if got := zarc.CLevel(tc.pct); got != tc.want {
			t.Errorf("zarc.CLevel(%v) = %d, want %d", tc.pct, got, tc.want)
		}
	}
}

// Portaria 349/2026 item 6.7.2: "janela de 30 (trinta) dias que antecederam
// a data de semeadura".
// These cases use the NDTI estimators (Estimator "median", "min"); the
// unmixing default is tested in TestCellCoverUnmix.
func TestCellCoverWindowAndFilter(t *testing.T) {
	sow := day("2024-10-31")
	mid := (defaultBareNDTI + defaultStrawNDTI) / 2 // 50 %
	at := func(daysBefore int, ndvi, ndti float64) Obs {
		return Obs{Date: sow.AddDate(0, 0, -daysBefore), NDVI: ndvi, NDTI: ndti}
	}
	tests := []struct {
		name  string
		obs   []Obs
		pct   float64
		n     int
		ok    bool
		param Params
	}{
		{"day 30 in", []Obs{at(30, 0.2, mid)}, 50, 1, true, Params{Estimator: "median"}},
		{"day 31 out", []Obs{at(31, 0.2, mid)}, nan, 0, false, Params{Estimator: "median"}},
		{"sowing day out", []Obs{at(0, 0.2, mid)}, nan, 0, false, Params{Estimator: "median"}},
		{"day 1 in", []Obs{at(1, 0.2, defaultStrawNDTI)}, 100, 1, true, Params{Estimator: "median"}},
		{"NDVI at threshold dropped", []Obs{at(5, 0.3, mid), at(6, 0.29, defaultBareNDTI)}, 0, 1, true, Params{Estimator: "median"}},
		{"NaN dropped", []Obs{at(5, nan, mid), at(6, 0.2, nan), at(7, 0.2, mid)}, 50, 1, true, Params{Estimator: "median"}},
		{"clamp high", []Obs{at(3, 0.2, 0.40)}, 100, 1, true, Params{Estimator: "median"}},
		{"clamp low", []Obs{at(3, 0.2, -0.05)}, 0, 1, true, Params{Estimator: "median"}},
		{"median of three", []Obs{at(3, 0.2, defaultBareNDTI), at(9, 0.2, mid), at(12, 0.2, defaultStrawNDTI)}, 50, 3, true, Params{Estimator: "median"}},
		{"min of three (Zheng)", []Obs{at(3, 0.2, defaultBareNDTI), at(9, 0.2, mid), at(12, 0.2, defaultStrawNDTI)}, 0, 3, true, Params{Estimator: "min"}},
		{"custom endmembers", []Obs{at(3, 0.2, 0.10)}, 50, 1, true, Params{Estimator: "median", BareNDTI: 0.02, StrawNDTI: 0.18}},
		{"custom window 10 days", []Obs{at(11, 0.2, mid)}, nan, 0, false, Params{Estimator: "median", WindowDays: 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pct, n, ok := CellCover(tc.obs, sow, tc.param)
			if !nearOrNaN(pct, tc.pct, 1e-9) || n != tc.n || ok != tc.ok {
				t.Errorf("CellCover = %v, %d, %v; want %v, %d, %v", pct, n, ok, tc.pct, tc.n, tc.ok)
			}
		})
	}
}

// onDryLine returns p with its straw and soil moved to the NDVI of its dry
// line (spectral.NewDry), where green mixed over them unmixes exactly.
func onDryLine(p Params) Params {
	p = p.withDefaults()
	u, _ := spectral.NewDry(p.Green, p.Straw, p.Soil)
	p.Straw.NDVI, p.Soil.NDVI = u.DryNDVI(), u.DryNDVI()
	return p
}

// TestCellCoverUnmix checks the default estimator on exact mixtures of
// the endmembers: each reading is unmixed into green, straw and soil, and
// the straw fraction is averaged over the window's days.
func TestCellCoverUnmix(t *testing.T) {
	sow := day("2024-10-31")
	var p Params
	// Mixtures with green are mixed with straw and soil on the dry line
	// (onDryLine), where they unmix exactly; see the weeds over the
	// reference straw and soil below.
	dry := onDryLine(p)
	at := func(daysBefore int, g, s float64) Obs {
		v, n := dry.Mix(g, s, 1-g-s)
		return Obs{Date: sow.AddDate(0, 0, -daysBefore), NDVI: v, NDTI: n}
	}
	weedy := at(10, 0.1, 0.45) // 10 % green weeds over 45 % straw, 45 % soil
	tests := []struct {
		name  string
		obs   []Obs
		pct   float64
		n     int
		ok    bool
		param Params
	}{
		{"half straw", []Obs{at(12, 0, 0.5)}, 50, 1, true, Params{}},
		{"day 30 in", []Obs{at(30, 0, 0.3)}, 30, 1, true, Params{}},
		{"sowing day out", []Obs{at(0, 0, 0.3)}, nan, 0, false, Params{}},
		{"green weeds unmixed", []Obs{weedy}, 45, 1, true, Params{}},
		{"NDVI at MaxNDVI dropped", []Obs{weedy}, nan, 0, false, Params{MaxNDVI: weedy.NDVI}},
		// Readings 25 and 5 days before sowing (window days 5 and 25), a
		// tillage between them: 0.8 held on days 0–5, linear on 6–24, 0.2
		// held on 25–29: (6·0.8 + 19·0.5 + 5·0.2)/30 = 0.51.
		{"tillage weighted by days", []Obs{at(25, 0, 0.8), at(5, 0, 0.2)}, 51, 2, true, Params{}},
		// An anchor 35 days before sowing (window day −5) at 1.0 and one
		// reading 10 days before (day 20) at 0.5: days 0–19 follow the line
		// 1 − 0.5·(k+5)/25, days 20–29 hold 0.5: (14.2 + 5)/30 = 0.64.
		{"anchor before the window", []Obs{at(35, 0, 1), at(10, 0, 0.5)}, 64, 1, true, Params{}},
		{"anchor alone is not a reading", []Obs{at(35, 0, 1), at(-3, 0, 1)}, nan, 0, false, Params{}},
		// Soil is not revolved after sowing: a reading after it shows the
		// ground of the sowing day and anchors the window's end there.
		// 0.8 read 10 days before (day 20), 0.2 after sowing (day 30):
		// days 0–20 hold 0.8, days 21–29 follow the line to 0.2:
		// (21·0.8 + 9·0.8 − 0.06·45)/30 = 0.71.
		{"after sowing anchors the sowing day", []Obs{at(10, 0, 0.8), at(-5, 0, 0.2)}, 71, 1, true, Params{}},
		{"after sowing, whatever the day", []Obs{at(10, 0, 0.8), at(-12, 0, 0.2)}, 71, 1, true, Params{}},
		// An emerging canopy (20 % green) over ground with 20 % straw
		// (0.16 of the pixel) reads as the ground's straw share, 0.2.
		{"after sowing, ground around the canopy", []Obs{at(10, 0, 0.8), at(-12, 0.2, 0.16)}, 71, 1, true, Params{}},
		// Only the first clear date after sowing counts (later ones add
		// the straw's decay since sowing): 0.1 at day 30, so days 21–29
		// follow 0.8 − 0.07·k: (21·0.8 + 7.2 − 0.07·45)/30 = 0.695.
		{"after sowing, the first date only", []Obs{at(10, 0, 0.8), at(-8, 0, 0.3), at(-3, 0, 0.1)}, 69.5, 1, true, Params{}},
		{"after sowing, the first date's readings averaged", []Obs{at(10, 0, 0.8), at(-3, 0, 0.1), at(-3, 0, 0.3), at(-20, 0, 0.9)}, 71, 1, true, Params{}},
		{"after sowing, 30 days at most", []Obs{at(10, 0, 0.8), at(-30, 0, 0.2)}, 80, 1, true, Params{}},
		{"after sowing, no anchor", []Obs{at(10, 0, 0.8), at(-5, 0, 0.2)}, 80, 1, true, Params{SowAnchorDays: -1}},
		{"no anchors", []Obs{at(35, 0, 1), at(10, 0, 0.5)}, 50, 1, true, Params{AnchorDays: -1}},
		{"same-day readings averaged", []Obs{at(10, 0, 0.4), at(10, 0, 0.6)}, 50, 2, true, Params{}},
		{"outside the triangle dropped", []Obs{{Date: sow.AddDate(0, 0, -4), NDVI: -0.2, NDTI: 0.5}, at(8, 0, 0.7)}, 70, 1, true, Params{}},
		{"clamped at 100", []Obs{at(8, 0, 1.1)}, 100, 1, true, Params{}},
		{"clamped at 0", []Obs{at(8, 0, -0.1)}, 0, 1, true, Params{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pct, n, ok := CellCover(tc.obs, sow, tc.param)
			if !nearOrNaN(pct, tc.pct, 1e-6) || n != tc.n || ok != tc.ok {
				t.Errorf("CellCover = %v, %d, %v; want %v, %d, %v", pct, n, ok, tc.pct, tc.n, tc.ok)
			}
		})
	}
	// The NDTI median reads a weedy pixel (10 % green over the reference
	// straw and soil) as more straw than there is: green canopy has a high
	// NDTI (≈ 0.37). The unmixing reads less green than there is, since
	// that straw and soil are darker in NDVI than the dry line, so more
	// straw than the truth too, but less than the median does.
	v, n := p.Mix(0.1, 0.45, 0.45)
	ref := Obs{Date: weedy.Date, NDVI: v, NDTI: n}
	med, _, _ := CellCover([]Obs{ref}, sow, Params{Estimator: "median"})
	if !(med > 45+5) {
		t.Errorf("median NDTI of the weedy reading = %.1f %%, expected the green bias (> 50 %%)", med)
	}
	if pct, _, _ := CellCover([]Obs{ref}, sow, p); !(pct > 45 && pct < med) {
		t.Errorf("weeds over the reference straw and soil read %.1f %%, want between the truth 45 %% and the NDTI median's %.1f %%", pct, med)
	}
	// BareNDTI and StrawNDTI, when set, are the unmixing's soil and straw NDTI.
	q := Params{BareNDTI: 0.02, StrawNDTI: 0.18}
	v, n = q.Mix(0, 0.25, 0.75)
	if pct, _, _ := CellCover([]Obs{{Date: sow.AddDate(0, 0, -3), NDVI: v, NDTI: n}}, sow, q); !testkit.Near(pct, 25, 1e-6) {
		t.Errorf("custom endmembers: %.3f %%, want 25", pct)
	}
}

// Fractions inverts Mix exactly for the pure endmembers and any straw/soil
// mixture; with green over them it reads through the dry line of one
// reading (fewReadingsDryNDVI: one reading says nothing of the field's
// dry surfaces), whose NDVI sits above the reference straw and soil, so
// green reads lower and straw higher than mixed (the dry line's price,
// docs/coverage.md), and exactly when straw and soil lie on that line.
func TestFractionsRoundTrip(t *testing.T) {
	var p Params
	for _, f := range [][3]float64{{0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {0, 0.5, 0.5}, {0, 0.9, 0.1}} {
		v, n := p.Mix(f[0], f[1], f[2])
		g, s, b := p.Fractions(v, n)
		if !testkit.Near(g, f[0], 1e-9) || !testkit.Near(s, f[1], 1e-9) || !testkit.Near(b, f[2], 1e-9) {
			t.Errorf("Fractions(Mix(%v)) = %.4f %.4f %.4f", f, g, s, b)
		}
	}
	dry := p.withDefaults()
	dry.Straw.NDVI, dry.Soil.NDVI = fewReadingsDryNDVI, fewReadingsDryNDVI
	for _, f := range [][3]float64{{0.2, 0.5, 0.3}, {0.05, 0.9, 0.05}} {
		v, n := dry.Mix(f[0], f[1], f[2])
		g, s, b := p.Fractions(v, n)
		if !testkit.Near(g, f[0], 1e-9) || !testkit.Near(s, f[1], 1e-9) || !testkit.Near(b, f[2], 1e-9) {
			t.Errorf("Fractions(Mix(%v) on the dry line) = %.4f %.4f %.4f", f, g, s, b)
		}
		v, n = p.Mix(f[0], f[1], f[2])
		if g, s, _ := p.Fractions(v, n); !(g < f[0] && s > f[1]) {
			t.Errorf("Fractions(Mix(%v)) = green %.4f straw %.4f: want less green and more straw than mixed", f, g, s)
		}
	}
	if g, _, _ := p.Fractions(nan, 0.1); !math.IsNaN(g) {
		t.Errorf("Fractions(NaN) = %v, want NaN", g)
	}
	// The endmembers' own indices.
	for _, e := range []spectral.Endmember{spectral.Green, spectral.Straw, spectral.Soil} {
		if !(e.NDVI > -1 && e.NDVI < 1 && e.NDTI > -1 && e.NDTI < 1) {
			t.Errorf("endmember %+v out of range", e)
		}
	}
}

func TestMedianSeries(t *testing.T) {
	d1, d2 := day("2024-01-01"), day("2024-01-06")
	cells := [][]Obs{
		{{Date: d1, NDVI: 0.2, NDTI: 0.1}, {Date: d2, NDVI: nan, NDTI: nan}},
		{{Date: d1, NDVI: 0.4, NDTI: nan}, {Date: d2, NDVI: 0.5, NDTI: 0.2}},
		{{Date: d1.Add(13 * time.Hour), NDVI: 0.9, NDTI: 0.3}},
	}
	got := MedianSeries(cells)
	if len(got) != 2 || !testkit.Near(got[0].NDVI, 0.4, 1e-12) || !testkit.Near(got[0].NDTI, 0.2, 1e-12) || !testkit.Near(got[1].NDVI, 0.5, 1e-12) || !testkit.Near(got[1].NDTI, 0.2, 1e-12) {
		t.Errorf("MedianSeries = %+v", got)
	}
}

// synthSeason builds a clean series: bare soil, one soybean cycle sown on
// sow (green-up logistic), harvest, then optionally a second crop.
func cleanSeries(sow time.Time, second bool, from, to time.Time, every int) []Obs {
	logistic := func(t, mid, k float64) float64 { return 1 / (1 + math.Exp(-(t-mid)/k)) }
	var out []Obs
	for d := from; d.Before(to); d = d.AddDate(0, 0, every) {
		x := d.Sub(sow).Hours() / 24
		v := 0.2 + 0.7*logistic(x, 32, 5)*(1-logistic(x, 110, 4))
		if second {
			v += 0.65 * logistic(x, 150, 5) * (1 - logistic(x, 230, 5))
		}
		out = append(out, Obs{Date: d, NDVI: v, NDTI: 0.15})
	}
	return out
}

func TestCyclesAndSowingClean(t *testing.T) {
	season, _ := ParseSeason("2024/2025", MonthDay{})
	sow := day("2024-10-20")
	obs := cleanSeries(sow, true, day("2024-06-01"), day("2025-09-30"), 5)
	cs := Cycles(obs, season, zarc.Soja, Params{})
	if len(cs) != 2 || cs[0].Kind != KindFirst || !cs[0].Main || cs[1].Kind != KindSecond {
		t.Fatalf("Cycles = %+v, want 1ª and 2ª safra", cs)
	}
	if !(cs[0].Start.Before(cs[0].Peak) && cs[0].Peak.Before(cs[0].End) && cs[0].End.Before(cs[1].Start)) {
		t.Errorf("cycle dates out of order: %+v", cs)
	}
	sw, err := DetectSowing(obs, season, zarc.Soja, Params{})
	if err != nil {
		t.Fatal(err)
	}
	if e := math.Abs(sw.Date.Sub(sow).Hours() / 24); e > 7 || sw.Source != SourceDetected || sw.Decendio != zarc.Decendio(sw.Date) {
		t.Errorf("DetectSowing = %+v, want ~%s detected", sw, sow.Format(time.DateOnly))
	}
}

// IN 2/2025 item 2.2: "A classificação do nível de manejo não pode ser
// realizada se algum dos indicadores não for medido ou informado".
func TestNoCycleSaysSo(t *testing.T) {
	season, _ := ParseSeason("2024/2025", MonthDay{})
	var flat []Obs
	for d := day("2024-06-01"); d.Before(day("2025-08-01")); d = d.AddDate(0, 0, 5) {
		flat = append(flat, Obs{Date: d, NDVI: 0.22, NDTI: 0.1})
	}
	if _, err := DetectSowing(flat, season, zarc.Soja, Params{}); !errors.Is(err, ErrNoCropCycle) {
		t.Errorf("flat series: err = %v, want ErrNoCropCycle", err)
	}
	// A cycle sown in March is outside the soybean window.
	late := cleanSeries(day("2025-03-10"), false, day("2024-06-01"), day("2025-08-01"), 5)
	if _, err := DetectSowing(late, season, zarc.Soja, Params{}); !errors.Is(err, ErrNoMainCrop) {
		t.Errorf("March sowing: err = %v, want ErrNoMainCrop", err)
	}
}

// cellsFor returns n identical-management cells with 75 % straw (25 %
// soil) before each sowing and a crop cycle per season; ndti holds the
// endmembers.
func cellsFor(sows []time.Time, ndti Params, n int) [][]Obs {
	var cells [][]Obs
	for c := 0; c < n; c++ {
		var all []Obs
		for _, s := range sows {
			from := s.AddDate(0, -4, 0)
			for _, o := range cleanSeries(s, false, from, from.AddDate(1, 0, 0), 5) {
				if o.NDVI < 0.3 {
					o.NDVI, o.NDTI = ndti.Mix(0, 0.75, 0.25)
				}
				all = append(all, o)
			}
		}
		cells = append(cells, all)
	}
	return cells
}

func TestAssessDeclaredWinsAndMissingSeason(t *testing.T) {
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	sows := []time.Time{day("2023-10-15"), day("2024-10-20"), day("2025-10-25")}
	cells := cellsFor(sows, Params{}, 4) // 75 % straw

	t.Run("detected", func(t *testing.T) {
		c := Assess(cells, contract, nil, zarc.Soja, Params{})
		if !c.OK || !testkit.Near(c.Pct, 75, 1e-6) || c.Level != 3 || len(c.Seasons) != 3 {
			t.Fatalf("Assess = %+v, want C 75 %% level 3", c)
		}
		for i, s := range c.Seasons {
			if s.Sowing.Source != SourceDetected || s.NCells != 4 || s.NObs == 0 {
				t.Errorf("season %d: %+v", i, s)
			}
			if !s.WindowEnd.Equal(s.Sowing.Date) || !s.WindowStart.Equal(s.Sowing.Date.AddDate(0, 0, -30)) {
				t.Errorf("season %d: window %s..%s for sowing %s", i, s.WindowStart, s.WindowEnd, s.Sowing.Date)
			}
		}
	})
	t.Run("declared wins", func(t *testing.T) {
		decl := map[string]Declared{"2024/2025": {FieldID: "f1", Season: "2024/2025", Date: day("2024-11-02"), Crop: zarc.Soja, Line: 2}}
		c := Assess(cells, contract, decl, zarc.Soja, Params{})
		s := c.Seasons[1]
		if s.Sowing.Source != SourceDeclared || !s.Sowing.Date.Equal(day("2024-11-02")) || s.Sowing.Confidence != 1 || s.Sowing.Decendio != 31 {
			t.Errorf("declared season: %+v", s.Sowing)
		}
		if c.Seasons[0].Sowing.Source != SourceDetected {
			t.Errorf("undeclared season source %q", c.Seasons[0].Sowing.Source)
		}
		if cs := s.Cycles; len(cs) == 0 || !cs[0].Main || cs[0].Kind != KindFirst {
			t.Errorf("declared season cycles %+v, want the crop labelled 1ª safra", cs)
		}
	})
	t.Run("missing season leaves C missing", func(t *testing.T) {
		// Drop every reading of 2024/2025: no cycle, no window.
		var cut [][]Obs
		s2 := contract.Assessed()[1]
		for _, cell := range cells {
			var kept []Obs
			for _, o := range cell {
				if !s2.Contains(o.Date) {
					kept = append(kept, o)
				}
			}
			cut = append(cut, kept)
		}
		c := Assess(cut, contract, nil, zarc.Soja, Params{})
		if c.OK || !math.IsNaN(c.Pct) || c.Level != 0 {
			t.Fatalf("C = %+v, want missing", c)
		}
		if !strings.Contains(c.Reason, "2024/2025") || !strings.Contains(c.Reason, "no sowing date") {
			t.Errorf("reason %q does not name the season and cause", c.Reason)
		}
		if !c.Seasons[0].OK || c.Seasons[1].OK || !c.Seasons[2].OK {
			t.Errorf("season OK flags %v %v %v, want true false true", c.Seasons[0].OK, c.Seasons[1].OK, c.Seasons[2].OK)
		}
	})
	t.Run("declared outside any cycle", func(t *testing.T) {
		decl := map[string]Declared{"2024/2025": {Season: "2024/2025", Date: day("2025-03-01")}}
		c := Assess(cells, contract, decl, zarc.Soja, Params{})
		for _, cy := range c.Seasons[1].Cycles {
			if cy.Main || cy.Kind != KindOther {
				t.Errorf("cycle %+v labelled main though the declared sowing starts none", cy)
			}
		}
	})
	t.Run("declared date but cloudy window", func(t *testing.T) {
		decl := map[string]Declared{"2023/2024": {Season: "2023/2024", Date: day("2023-09-01")}}
		var cut [][]Obs
		for _, cell := range cells {
			var kept []Obs
			for _, o := range cell {
				if o.Date.Before(day("2023-08-02")) || !o.Date.Before(day("2023-09-01")) {
					kept = append(kept, o)
				}
			}
			cut = append(cut, kept)
		}
		c := Assess(cut, contract, decl, zarc.Soja, Params{})
		if c.OK || c.Seasons[0].OK || !strings.Contains(c.Seasons[0].Reason, "no clear reading") {
			t.Errorf("season 0 = %+v, want missing with 'no clear reading'", c.Seasons[0])
		}
	})
}

func TestParamsValidate(t *testing.T) {
	if err := (Params{}).Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	tests := []struct {
		name string
		p    Params
		want string
	}{
		{"endmembers swapped", Params{BareNDTI: 0.3, StrawNDTI: 0.1}, "StrawNDTI"},
		{"estimator", Params{Estimator: "mode"}, "Estimator"},
		{"collinear endmembers", Params{Green: spectral.Endmember{NDVI: 0.2, NDTI: 0.2, VNIR: 0.4, SWIR: 0.5}, Straw: spectral.Endmember{NDVI: 0.3, NDTI: 0.3, VNIR: 0.4, SWIR: 0.5}, Soil: spectral.Endmember{NDVI: 0.1, NDTI: 0.1, VNIR: 0.3, SWIR: 0.5}}, "collinear"},
		{"dark endmember", Params{Green: spectral.Endmember{NDVI: 0.8, NDTI: 0.3}}, "positive VNIR"},
		{"haze gate", Params{HazeGreen: -0.1}, "HazeGreen"},
		{"green-up", Params{GreenUp: 1.5}, "GreenUp"},
		{"window days", Params{WindowDays: -3}, "WindowDays"},
		{"lag", Params{LagDays: map[zarc.Crop]float64{zarc.Soja: -1}}, "LagDays"},
		{"window month-day", Params{Windows: map[zarc.Crop][2]MonthDay{zarc.Soja: {{time.February, 30}, {time.March, 1}}}}, "Windows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if !errors.Is(err, ErrParams) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want ErrParams naming %s", err, tc.want)
			}
			contract, _ := ParseSeason("2026/2027", MonthDay{})
			if c := Assess(nil, contract, nil, zarc.Soja, tc.p); c.OK || !strings.Contains(c.Reason, tc.want) {
				t.Errorf("Assess with bad params = %+v", c)
			}
		})
	}
}
