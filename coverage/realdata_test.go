package coverage

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/zarc"
)

// realdata is the repository's copy of the real data (testdata/realdata/README.md).
var realdata = filepath.Join("..", "testdata", "realdata")

// modisDay dates a MOD13Q1 composite by the middle of its 16-day window:
// the files carry the composite's first day, but each pixel was acquired on
// any day of the window (its "composite day of the year" layer, absent
// here). The first day would bias green-up, and so sowing, about 8 days
// early.
func modisDay(compositeStart string) time.Time { return day(compositeStart).AddDate(0, 0, 8) }

func parseNum(t testing.TB, s string) float64 {
	if s == "" || strings.EqualFold(s, "nan") || strings.EqualFold(s, "na") {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("number %q: %v", s, err)
	}
	return v
}

// sinopPoint is one labelled MOD13Q1 point of testdata/sinop_ndvi.csv.
type sinopPoint struct {
	id, label string
	obs       []Obs
}

func loadSinop(t testing.TB) []sinopPoint {
	by := map[string]*sinopPoint{}
	var ids []string
	for _, r := range testkit.ReadCSV(t, filepath.Join("testdata", "sinop_ndvi.csv"))[1:] {
		p := by[r[0]]
		if p == nil {
			p = &sinopPoint{id: r[0], label: r[1]}
			by[r[0]] = p
			ids = append(ids, r[0])
		}
		p.obs = append(p.obs, Obs{Date: modisDay(r[2]), NDVI: parseNum(t, r[3]) / 10000, NDTI: math.NaN()})
	}
	var out []sinopPoint
	for _, id := range ids {
		out = append(out, *by[id])
	}
	return out
}

// TestRealSinopSoyCorn: on the labelled Soy_Corn points of the Sinop
// MOD13Q1 cube (NDVI only), two crop cycles are found in 2013/2014 and the
// soybean sowing falls between mid-September and the end of November 2013
// (issue 10, real-data evidence). Forest points show no crop cycle.
func TestRealSinopSoyCorn(t *testing.T) {
	season, _ := ParseSeason("2013/2014", MonthDay{})
	lo, hi := day("2013-09-15"), day("2013-11-30")
	n := 0
	for _, pt := range loadSinop(t) {
		cs := Cycles(pt.obs, season, zarc.Soja, Params{})
		sw, err := DetectSowing(pt.obs, season, zarc.Soja, Params{})
		var desc []string
		for _, c := range cs {
			desc = append(desc, fmt.Sprintf("%s %s→%s→%s peak %.2f", c.Kind, c.Start.Format(time.DateOnly), c.Peak.Format(time.DateOnly), c.End.Format(time.DateOnly), c.PeakNDVI))
		}
		t.Logf("point %s %-8s sowing %s (%v, confidence %.2f, decêndio %d) cycles: %s", pt.id, pt.label,
			sw.Date.Format(time.DateOnly), err, sw.Confidence, sw.Decendio, strings.Join(desc, "; "))
		switch pt.label {
		case "Soy_Corn":
			n++
			if len(cs) != 2 {
				t.Errorf("point %s Soy_Corn: %d cycles, want 2", pt.id, len(cs))
			} else if cs[0].Kind != KindFirst || cs[1].Kind != KindSecond {
				t.Errorf("point %s Soy_Corn: kinds %q, %q, want %q, %q", pt.id, cs[0].Kind, cs[1].Kind, KindFirst, KindSecond)
			}
			if err != nil {
				t.Errorf("point %s Soy_Corn: DetectSowing: %v", pt.id, err)
			} else if sw.Date.Before(lo) || sw.Date.After(hi) {
				t.Errorf("point %s Soy_Corn: sowing %s outside %s..%s", pt.id, sw.Date.Format(time.DateOnly), lo.Format(time.DateOnly), hi.Format(time.DateOnly))
			}
		case "Forest":
			if err == nil {
				t.Errorf("point %s Forest: sowing %s detected, want none", pt.id, sw.Date.Format(time.DateOnly))
			}
		}
	}
	if n != 6 {
		t.Fatalf("%d Soy_Corn points in testdata, want 6", n)
	}
}

// TestRealMTLabelledCycles: on the sits Mato Grosso MOD13Q1 samples,
// double-crop labels get two cycles and Soy_Fallow one, in at least 85 %
// of the samples of each label (issue 10, real-data evidence).
func TestRealMTLabelledCycles(t *testing.T) {
	dir := filepath.Join(realdata, "sits-mt-labelled-timeseries")
	want := map[string]int{"Soy_Corn": 2, "Soy_Cotton": 2, "Soy_Millet": 2, "Soy_Sunflower": 2, "Soy_Fallow": 1}
	type sample struct {
		label      string
		start, end time.Time
		obs        []Obs
	}
	samples := map[string]*sample{}
	for _, r := range testkit.ReadCSV(t, filepath.Join(dir, "samples_mt_4bands_samples.csv"))[1:] {
		if _, ok := want[r[5]]; ok {
			samples[r[0]] = &sample{label: r[5], start: day(r[3]), end: modisDay(r[4]).AddDate(0, 0, 8)}
		}
	}
	for _, r := range testkit.ReadCSV(t, filepath.Join(dir, "samples_mt_4bands_series.csv"))[1:] {
		if s := samples[r[0]]; s != nil {
			s.obs = append(s.obs, Obs{Date: modisDay(r[1]), NDVI: parseNum(t, r[2]), NDTI: math.NaN()})
		}
	}
	type tally struct {
		n, ok  int
		counts map[int]int
	}
	by := map[string]*tally{}
	for _, s := range samples {
		season := Season{Label: fmt.Sprintf("%d/%d", s.start.Year(), s.start.Year()+1), Start: s.start, End: s.end.AddDate(0, 0, 1)}
		k := len(Cycles(s.obs, season, zarc.Soja, Params{}))
		tl := by[s.label]
		if tl == nil {
			tl = &tally{counts: map[int]int{}}
			by[s.label] = tl
		}
		tl.n++
		tl.counts[k]++
		if k == want[s.label] {
			tl.ok++
		}
	}
	labels := make([]string, 0, len(by))
	for l := range by {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	t.Logf("| label | samples | expected cycles | agree | %% | cycles found (count: samples) |")
	t.Logf("|---|---|---|---|---|---|")
	for _, l := range labels {
		tl := by[l]
		var cs []string
		for k := 0; k <= 4; k++ {
			if tl.counts[k] > 0 {
				cs = append(cs, fmt.Sprintf("%d: %d", k, tl.counts[k]))
			}
		}
		pct := 100 * float64(tl.ok) / float64(tl.n)
		t.Logf("| %s | %d | %d | %d | %.1f | %s |", l, tl.n, want[l], tl.ok, pct, strings.Join(cs, ", "))
		if pct < 85 {
			t.Errorf("%s: %.1f %% of samples with %d cycles, want ≥ 85 %%", l, pct, want[l])
		}
	}
}
