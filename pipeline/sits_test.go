package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/sinm"
)

// sitsDir is the repository's copy of the sits Mato Grosso labelled MOD13Q1
// samples (testdata/realdata/sits-mt-labelled-timeseries/README.md).
var sitsDir = filepath.Join("..", "testdata", "realdata", "sits-mt-labelled-timeseries")

// sitsCycles is what the labels say: a double crop has two cycles in its
// crop year, soybean followed by fallow one.
var sitsCycles = map[string]int{"Soy_Corn": 2, "Soy_Cotton": 2, "Soy_Millet": 2, "Soy_Sunflower": 2, "Soy_Fallow": 1}

// TestAnalyseSitsMT runs manejo analyse on the real sits Mato Grosso
// samples (issue 17, real-data check): each labelled sample becomes a
// talhão of one point, its MOD13Q1 NDVI dated by the middle of the 16-day
// composite, the agricultural year starting on 09-14 as the samples' crop
// years do. Double-crop labels must get two cycles and Soy_Fallow one in at
// least 85 % of the samples of each label, as coverage's
// TestRealMTLabelledCycles asks of the cycle detection itself; and every
// sample must get exactly the cycles coverage.Cycles finds on its series
// (the analysis adds no difference of its own). The two samples with an
// NDVI over 1 (sits interpolation) are refused with their row and column.
func TestAnalyseSitsMT(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data analysis skipped in -short mode")
	}
	samples := map[string]*sitsSample{}
	for _, r := range testkit.ReadCSV(t, filepath.Join(sitsDir, "samples_mt_4bands_samples.csv"))[1:] {
		if _, ok := sitsCycles[r[5]]; ok {
			start, _ := time.Parse(time.DateOnly, r[3])
			samples[r[0]] = &sitsSample{id: r[0], label: r[5], lon: r[1], lat: r[2], start: start}
		}
	}
	for _, r := range testkit.ReadCSV(t, filepath.Join(sitsDir, "samples_mt_4bands_series.csv"))[1:] {
		if s := samples[r[0]]; s != nil {
			d, _ := time.Parse(time.DateOnly, r[1])
			s.rows = append(s.rows, fmt.Sprintf("%s,1,%s,%s,%s,%s,soja", s.id, s.lon, s.lat, d.AddDate(0, 0, 8).Format(time.DateOnly), r[2]))
		}
	}
	// One analysis per contract year whose last assessed year holds the
	// samples' crop years: 2006/07 (contract 2008/2009), 2014/15 and
	// 2015/16 (contract 2016/2017).
	byContract := map[string][]*sitsSample{}
	for _, s := range samples {
		c := "2016/2017"
		if s.start.Year() < 2014 {
			c = "2008/2009"
		}
		byContract[c] = append(byContract[c], s)
	}
	type tally struct{ n, ok, refused int }
	by := map[string]*tally{}
	for contract, ss := range byContract {
		got, refused := analyseSits(t, contract, ss)
		for _, s := range ss {
			tl := by[s.label]
			if tl == nil {
				tl = &tally{}
				by[s.label] = tl
			}
			if msg, ok := refused[s.id]; ok {
				tl.refused++
				t.Logf("sample %s (%s) refused: %s", s.id, s.label, msg)
				if !strings.Contains(msg, "column ndvi") || !strings.Contains(msg, "outside −1..1") {
					t.Errorf("sample %s refused for %q, want an NDVI over 1 named by its column", s.id, msg)
				}
				continue
			}
			tl.n++
			season := fmt.Sprintf("%d/%d", s.start.Year(), s.start.Year()+1)
			k := got[s.id][season]
			if k == sitsCycles[s.label] {
				tl.ok++
			}
			if want := directCycles(t, s.rows, s.start); k != want {
				t.Errorf("sample %s %s: analyse found %d cycles, coverage.Cycles %d", s.id, s.label, k, want)
			}
		}
	}
	labels := make([]string, 0, len(by))
	for l := range by {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	t.Logf("| label | samples analysed | refused | expected cycles | agree | %% |")
	for _, l := range labels {
		tl := by[l]
		pct := 100 * float64(tl.ok) / float64(tl.n)
		t.Logf("| %s | %d | %d | %d | %d | %.1f |", l, tl.n, tl.refused, sitsCycles[l], tl.ok, pct)
		if pct < 85 {
			t.Errorf("%s: %.1f %% of samples with %d cycles, want ≥ 85 %%", l, pct, sitsCycles[l])
		}
	}
}

// sitsSample is one labelled sample and its table rows.
type sitsSample struct {
	id, label, lon, lat string
	start               time.Time
	rows                []string
}

// directCycles counts the cycles coverage.Cycles finds in a sample's crop
// year from its table rows.
func directCycles(t *testing.T, rows []string, start time.Time) int {
	var obs []coverage.Obs
	for _, r := range rows {
		f := strings.Split(r, ",")
		d, _ := time.Parse(time.DateOnly, f[4])
		v, err := strconv.ParseFloat(f[5], 64)
		if err != nil {
			v = math.NaN()
		}
		obs = append(obs, coverage.Obs{Date: d, NDVI: float64(float32(v)), NDTI: math.NaN()})
	}
	season := coverage.Season{Label: fmt.Sprintf("%d/%d", start.Year(), start.Year()+1), Start: start, End: start.AddDate(1, 0, 0)}
	return len(coverage.Cycles(obs, season, "soja", coverage.Params{}))
}

// analyseSits writes the samples as an observation table, analyses it for
// the contract year and returns the cycles per sample and season, and the
// refused samples with their reasons.
func analyseSits(t *testing.T, contract string, ss []*sitsSample) (map[string]map[string]int, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("field_id,point_id,lon,lat,date,ndvi,crop\n")
	for _, s := range ss {
		b.WriteString(strings.Join(s.rows, "\n") + "\n")
	}
	table := filepath.Join(dir, "sits.csv")
	if err := os.WriteFile(table, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	start := coverage.MonthDay{Month: time.September, Day: 14}
	season, err := coverage.ParseSeason(contract, start)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := AnalyseTable(context.Background(), TableConfig{Observations: table, Collection: "mod13q1", Out: out, Season: season,
		AgriYearStart: start, Codes: sinm.SatelliteCodes{"mod13q1": "S05"}, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	cycles, err := export.ReadDataset[export.CycleRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]int{}
	for _, c := range cycles {
		// A 2ª/3ª safra carries its sowing, before its green-up (issue 30 item 4).
		if (c.Cycle == 2 || c.Cycle == 3) && (c.SowingDate == nil || *c.SowingDate >= c.StartDate) {
			t.Errorf("%s %s cycle %d: sowing %v, green-up %s", c.FieldID, c.Season, c.Cycle, c.SowingDate, c.StartDate)
		}
		if got[c.FieldID] == nil {
			got[c.FieldID] = map[string]int{}
		}
		got[c.FieldID][c.Season]++
	}
	m, err := readManifest(context.Background(), filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{}
	for _, f := range m.Failures {
		if f.Status == export.StatusFailed {
			refused[f.FieldID] = f.Reason
		}
	}
	logSitsSeasons(t, out, ss)
	return got, refused
}

// logSitsSeasons reports what the analysis says of each sample's own crop
// year beyond its cycles: a detected sowing (and its decêndio), and why C
// is missing (MOD13Q1 has no SWIR: no NDTI).
func logSitsSeasons(t *testing.T, out string, ss []*sitsSample) {
	seasons, err := export.ReadDataset[export.SeasonRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]string{}
	for _, s := range ss {
		own[s.id] = fmt.Sprintf("%d/%d", s.start.Year(), s.start.Year()+1)
	}
	sown, total := 0, 0
	byMonth := map[time.Month]int{}
	for _, r := range seasons {
		if own[r.FieldID] != r.Season {
			continue
		}
		total++
		if r.SowingDate != nil {
			sown++
			byMonth[r.SowingDate.Time().Month()]++
		}
	}
	partial := 0
	for _, r := range inds {
		if r.Status == export.StatusPartial && r.CPct == nil {
			partial++
		}
	}
	t.Logf("%d samples' own crop years: sowing detected in %d (by month: %v); %d of %d talhões without C (no NDTI in MOD13Q1)", total, sown, byMonth, partial, len(inds))
}
