package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
)

// analyseWinterTable runs manejo analyse on a table of 1 November 2019 →
// 20 May 2020 windows (season 2020/2021, as of 2020-05-25; Landsat and
// Sentinel-2 coded) into out, and returns its events and indicators. The
// run is partial (no DEM, no payload).
func analyseWinterTable(t *testing.T, table, out string) ([]export.EventRow, []export.IndicatorRow) {
	t.Helper()
	code, _, stderr := runCLI(t, "analyse", "--observations", table, "--out", out, "--season", "2020/2021",
		"--as-of", "2020-05-25", "--satellite-codes", "landsat-c2-l2=S01,sentinel-2-l2a=S02", "--quiet")
	if code != exitPartial {
		t.Fatalf("%s: exit %d (%s), want %d (partial: no slope, no payload)", table, code, stderr, exitPartial)
	}
	ev, err := export.ReadDataset[export.EventRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	ind, err := export.ReadDataset[export.IndicatorRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	return ev, ind
}

// portfolioTable writes a table of the given talhões of a region read
// together, 1 November → 20 May: Landsat 8 and Landsat 7 (SLC-off: a
// quarter of the points masked) alternating every 8 days under
// landsat-c2-l2, Sentinel-2 every 5 days; on every date an NDTI offset
// shared by all the talhões (σ 0.04: sensor calibration, atmosphere, a
// regional wetting), a talhão's own (σ 0.003) and each point's (σ 0.01).
// T0–T2 lose 0.05 of NDTI from early April (a chisel pass on little
// stover); N0–N6 never.
func portfolioTable(t *testing.T, path string, ids []string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(30, 2))
	start, end := time.Date(2019, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2020, 5, 20, 0, 0, 0, 0, time.UTC)
	type pass struct {
		d          time.Time
		coll, item string
		off        float64
		slcOff     bool
	}
	var passes []pass
	for d, i := start, 0; !d.After(end); d, i = d.AddDate(0, 0, 8), i+1 {
		p := pass{d, "landsat-c2-l2", "LC08_L2SP_026031_" + d.Format("20060102"), 0, false}
		if i%2 == 1 {
			p = pass{d, "landsat-c2-l2", "LE07_L2SP_026031_" + d.Format("20060102"), 0.012, true}
		}
		passes = append(passes, p)
	}
	for d := start.AddDate(0, 0, 2); !d.After(end); d = d.AddDate(0, 0, 5) {
		passes = append(passes, pass{d, "sentinel-2-l2a", "S2B_MSIL2A_" + d.Format("20060102"), -0.015, false})
	}
	for i := range passes {
		passes[i].off += 0.04 * rng.NormFloat64()
	}
	all := []string{"T0", "T1", "T2", "N0", "N1", "N2", "N3", "N4", "N5", "N6"}
	var b strings.Builder
	b.WriteString("field_id,point_id,lon,lat,date,collection,item_id,crop,clear,red,nir,swir16,swir22\n")
	for k, id := range all {
		till := time.Date(2020, 4, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 5*k)
		own := make([]float64, len(passes))
		for i := range own {
			own[i] = 0.003 * rng.NormFloat64()
		}
		noise := make([]float64, len(passes)*20)
		for i := range noise {
			noise[i] = 0.01 * rng.NormFloat64()
		}
		if !slices.Contains(ids, id) {
			continue
		}
		for i, ps := range passes {
			for p := range 20 {
				ndti := 0.12 + ps.off + own[i] + noise[i*20+p]
				if id[0] == 'T' && !ps.d.Before(till) {
					ndti -= 0.05
				}
				s22, red := 0.15, 0.08
				s16, nir := s22*(1+ndti)/(1-ndti), red*1.2/0.8
				cells := fmt.Sprintf("true,%.4f,%.4f,%.4f,%.4f", red, nir, s16, s22)
				if ps.slcOff && p%4 == k%4 {
					cells = "false,,,,"
				}
				fmt.Fprintf(&b, "%s,%sp%d,%.4f,42.0,%s,%s,%s,corn,%s\n", id, id, p, -93.5+float64(p)*0.0005+float64(k)*0.01,
					ps.d.Format(time.DateOnly), ps.coll, ps.item, cells)
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAnalysePortfolioTable: talhões read together speak where one read
// alone is silent (issue 30). Analysed alone, T0's April drop (0.05) is
// lost in the date offsets (σ 0.04) and it ends censored with the
// strongest step in its reasons; analysed with the nine others, their
// offsets are removed and T0–T2 get their event, dated in April, with
// Landsat 7 and 8 named apart in its sensors, and no N talhão gets one.
func TestAnalysePortfolioTable(t *testing.T) {
	dir := t.TempDir()
	analyse := func(name string, ids []string) ([]export.EventRow, []export.IndicatorRow) {
		table := filepath.Join(dir, name+".csv")
		portfolioTable(t, table, ids)
		return analyseWinterTable(t, table, filepath.Join(dir, name))
	}
	ev, ind := analyse("alone", []string{"T0"})
	if len(ev) != 0 || len(ind) != 1 || !ind[0].TCensored || !strings.Contains(strings.Join(ind[0].Reasons, "; "), "the largest NDTI step") {
		t.Errorf("T0 alone: %d events, indicators %+v; want none, T censored with the strongest step in its reasons", len(ev), ind)
	}
	ev, ind = analyse("portfolio", []string{"T0", "T1", "T2", "N0", "N1", "N2", "N3", "N4", "N5", "N6"})
	got := map[string]bool{}
	for _, e := range ev {
		got[e.FieldID] = true
		d := e.Date.Time()
		if e.FieldID[0] != 'T' || d.Before(time.Date(2020, 4, 1, 0, 0, 0, 0, time.UTC)) || d.After(time.Date(2020, 4, 30, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("event %s on %s (%s), want events on T0–T2 only, in April", e.FieldID, d.Format(time.DateOnly), e.Test)
		}
		if !slices.Contains(e.Sensors, "landsat-c2-l2/LE07") && !slices.Contains(e.Sensors, "landsat-c2-l2/LC08") {
			t.Errorf("event %s: sensors %v, want Landsat named by platform", e.FieldID, e.Sensors)
		}
	}
	for _, id := range []string{"T0", "T1", "T2"} {
		if !got[id] {
			t.Errorf("%s analysed with its portfolio: no event", id)
		}
	}
	for _, r := range ind {
		if r.TYears == nil && !r.TCensored {
			t.Errorf("%s: T neither decided nor censored", r.FieldID)
		}
		// A talhão without an event is told the portfolio's verdict on its
		// window's residue level (review s7 #9), not "no portfolio".
		if why := strings.Join(r.Reasons, "; "); strings.HasPrefix(r.FieldID, "N") &&
			(!strings.Contains(why, "the residue cover of the short series") || !strings.Contains(why, "the portfolio's other talhões")) {
			t.Errorf("%s: reasons %q, want the window's residue cover with the portfolio's verdict", r.FieldID, why)
		}
	}
}
