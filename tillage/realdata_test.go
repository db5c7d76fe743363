package tillage

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
)

func realdata(t testing.TB, parts ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{"..", "testdata", "realdata"}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("real data %s missing (it is part of the repository): %v", p, err)
	}
	return p
}

// readCSV returns the header's columns and the records of a CSV file.
func readCSV(t testing.TB, path string) (map[string]int, [][]string) {
	t.Helper()
	rows := testkit.ReadCSV(t, path)
	return testkit.Columns(rows[0]), rows[1:]
}

// TestHarvestBreakBfast: bfast's harvest.csv (MODIS 16-day NDVI of a Pinus
// radiata plantation, clear-cut in 2004). bfast puts the trend break at
// observation 105 (2004 period 16, 95 % CI 104–106); the generic NDVI
// detector must put one within one observation of it.
func TestHarvestBreakBfast(t *testing.T) {
	col, rows := readCSV(t, realdata(t, "bfast-ndvi-breaks", "harvest.csv"))
	dates := make([]time.Time, len(rows))
	ndvi := make([]float64, len(rows))
	index := map[time.Time]int{}
	for i, r := range rows {
		y, _ := strconv.Atoi(r[col["year"]])
		per, _ := strconv.Atoi(r[col["period"]])
		v, err := strconv.ParseFloat(r[col["ndvi"]], 64)
		if err != nil {
			t.Fatalf("harvest.csv row %d: %v", i+2, err)
		}
		dates[i] = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 16*(per-1))
		ndvi[i] = v
		index[dates[i]], _ = strconv.Atoi(r[col["index"]])
	}
	br := Breaks(dates, ndvi, DefaultParams())
	if len(br) == 0 {
		t.Fatal("Breaks(harvest.csv) found no break, want one at observation 105 ± 1")
	}
	found := false
	strongest := br[0]
	for _, b := range br {
		if math.Abs(b.MagnitudeSigma) > math.Abs(strongest.MagnitudeSigma) {
			strongest = b
		}
		i := index[b.Date]
		t.Logf("break at observation %d (%s), %.1f σ, level %.2f → %.2f", i, b.Date.Format(time.DateOnly), b.MagnitudeSigma, b.PreLevel, b.PostLevel)
		if i >= 104 && i <= 106 {
			found = true
			if b.MagnitudeSigma >= 0 {
				t.Errorf("break at %d has magnitude %.1f σ, want a drop (< 0)", i, b.MagnitudeSigma)
			}
		}
	}
	if !found {
		t.Errorf("no break within one observation of 105 (the 2004 harvest)")
	}
	if i := index[strongest.Date]; i < 104 || i > 106 {
		t.Errorf("strongest break at observation %d, want the 2004 harvest (105 ± 1)", i)
	}
}

// TestSinopSoyCornNoTillage: real MOD13Q1 NDVI of labelled double-crop
// fields in Mato Grosso (sits samples_mt_4bands: Soy_Corn, Soy_Cotton,
// Soy_Millet, Soy_Fallow). They carry no SWIR-1 band, so NDTI cannot
// validate any break (Portaria 349, 6.8: "validadas pelo índice NDTI") and
// no tillage break or event may come out; the generic NDVI detector does see
// the soybean harvest, which shows the breaks exist and that only the NDTI
// validation keeps them from being read as tillage.
func TestSinopSoyCornNoTillage(t *testing.T) {
	dir := realdata(t, "sits-mt-labelled-timeseries")
	scol, samples := readCSV(t, filepath.Join(dir, "samples_mt_4bands_samples.csv"))
	label := map[string]string{}
	for _, r := range samples {
		label[r[scol["sample_id"]]] = r[scol["label"]]
	}
	col, rows := readCSV(t, filepath.Join(dir, "samples_mt_4bands_series.csv"))
	series := map[string][]Obs{}
	var order []string
	for i, r := range rows {
		id := r[col["sample_id"]]
		switch label[id] {
		case "Soy_Corn", "Soy_Cotton", "Soy_Millet", "Soy_Fallow":
		default:
			continue
		}
		dt, err := time.Parse(time.DateOnly, r[col["date"]])
		if err != nil {
			t.Fatalf("series row %d: %v", i+2, err)
		}
		v := math.NaN()
		if s := r[col["NDVI"]]; s != "" {
			if v, err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatalf("series row %d: %v", i+2, err)
			}
		}
		if _, ok := series[id]; !ok {
			order = append(order, id)
		}
		series[id] = append(series[id], Obs{Date: dt, NDVI: v, NDTI: math.NaN()})
	}
	if len(order) < 500 {
		t.Fatalf("read %d double-crop samples, want ≥ 500", len(order))
	}
	p := DefaultParams()
	harvestSeen := 0
	var cells []Cell
	for _, id := range order {
		obs := series[id]
		if b := DetectCell(obs, p); len(b) != 0 {
			t.Errorf("sample %s (%s): DetectCell = %d breaks without NDTI, want none", id, label[id], len(b))
		}
		cells = append(cells, Cell{ID: id, Obs: obs})
		dates := make([]time.Time, len(obs))
		v := make([]float64, len(obs))
		for i, o := range obs {
			dates[i], v[i] = o.Date, o.NDVI
		}
		for _, b := range Breaks(dates, v, p) {
			if m := b.Date.Month(); b.MagnitudeSigma < 0 && (m >= time.December || m <= time.April) {
				harvestSeen++
				break
			}
		}
	}
	if ev := Detect(cells, p); len(ev) != 0 {
		t.Errorf("Detect over %d real double-crop series = %d events, want none", len(cells), len(ev))
	}
	share := float64(harvestSeen) / float64(len(order))
	t.Logf("%d double-crop samples; generic NDVI breaks at the soybean harvest (Dec–Apr drop) in %.0f %% of them; tillage events: 0", len(order), 100*share)
	if share < 0.5 {
		t.Errorf("generic NDVI detector saw the harvest drop in %.0f %% of samples, want ≥ 50 %% (real breaks exist)", 100*share)
	}
}
