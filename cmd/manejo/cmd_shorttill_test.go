package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
)

// singleFieldTable writes one talhão of 100 points read alone, 1 November
// → 20 May, as the real tables of issue 30 are: Landsat 8 and Landsat 7
// (SLC-off: a quarter of the points masked) alternating every 8 days under
// landsat-c2-l2, Sentinel-2 every 5 days; each date an NDTI offset shared
// by all the points (σ 0.02) and each point's noise (σ 0.01), around a
// level of ndti all season (NDVI 0.2: dry residue and soil).
func singleFieldTable(t *testing.T, path, id string, ndti float64, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 30))
	start, end := time.Date(2019, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2020, 5, 20, 0, 0, 0, 0, time.UTC)
	type pass struct {
		d          time.Time
		coll, item string
		slcOff     bool
	}
	var passes []pass
	for d, i := start, 0; !d.After(end); d, i = d.AddDate(0, 0, 8), i+1 {
		p := pass{d, "landsat-c2-l2", "LC08_L2SP_026031_" + d.Format("20060102"), false}
		if i%2 == 1 {
			p = pass{d, "landsat-c2-l2", "LE07_L2SP_026031_" + d.Format("20060102"), true}
		}
		passes = append(passes, p)
	}
	for d := start.AddDate(0, 0, 2); !d.After(end); d = d.AddDate(0, 0, 5) {
		passes = append(passes, pass{d, "sentinel-2-l2a", "S2B_MSIL2A_" + d.Format("20060102"), false})
	}
	var b strings.Builder
	b.WriteString("field_id,point_id,lon,lat,date,collection,item_id,crop,clear,red,nir,swir16,swir22\n")
	for _, ps := range passes {
		off := 0.02 * rng.NormFloat64()
		for p := range 100 {
			v := ndti + off + 0.01*rng.NormFloat64()
			s22, red := 0.15, 0.08
			s16, nir := s22*(1+v)/(1-v), red*1.2/0.8
			cells := fmt.Sprintf("true,%.4f,%.4f,%.4f,%.4f", red, nir, s16, s22)
			if ps.slcOff && p%4 == int(ps.d.Unix()/86400)%4 {
				cells = "false,,,,"
			}
			fmt.Fprintf(&b, "%s,%sp%d,%.4f,%.4f,%s,%s,%s,corn,%s\n", id, id, p, -93.5+float64(p%10)*0.0005, 42.0+float64(p/10)*0.0005,
				ps.d.Format(time.DateOnly), ps.coll, ps.item, cells)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAnalyseSingleFieldResidue: one talhão analysed alone, with no peer
// to remove its date offsets, still speaks (issue 30). Chiselled in the
// autumn before its first reading (NDTI 0.065 all window: about 7 % of
// the ground under straw, no step to see), it gets a low-residue event
// dated at its first bare date and T 0; kept under straw (NDTI 0.12:
// about 36 %), it gets none, T censored, and its reasons say how near it
// came: the largest step and the residue cover against the bound.
func TestAnalyseSingleFieldResidue(t *testing.T) {
	dir := t.TempDir()
	analyse := func(id string, ndti float64) ([]export.EventRow, []export.IndicatorRow) {
		table := filepath.Join(dir, id+".csv")
		singleFieldTable(t, table, id, ndti, 7)
		ev, ind := analyseWinterTable(t, table, filepath.Join(dir, id))
		if len(ind) != 1 {
			t.Fatalf("%s: %d indicator rows, want 1", id, len(ind))
		}
		return ev, ind
	}
	ev, ind := analyse("FALL", 0.065)
	if len(ev) != 1 || ev[0].Test != "low-residue" {
		t.Fatalf("FALL alone: events %+v, want one low-residue event", ev)
	}
	e := ev[0]
	if d := e.Date.Time(); d.Before(time.Date(2019, 11, 1, 0, 0, 0, 0, time.UTC)) || d.After(time.Date(2019, 11, 10, 0, 0, 0, 0, time.UTC)) || e.Before != e.Date {
		t.Errorf("FALL: event on %s (before %s), want its first bare date in early November, before = date", d.Format(time.DateOnly), e.Before.Time().Format(time.DateOnly))
	}
	if e.NInterior < 50 || e.MagnitudeSigma <= 1 {
		t.Errorf("FALL: %d points agree, %.1f standard errors below the bound; want at least half of the 100 points, > 1", e.NInterior, e.MagnitudeSigma)
	}
	if r := ind[0]; r.TYears == nil || *r.TYears != 0 || r.TCensored {
		t.Errorf("FALL: T %v censored %v, want 0 years", r.TYears, r.TCensored)
	}
	t.Logf("FALL alone: %s event on %s, %.1f σ below the bound, %d points", e.Test, e.Date.Time().Format(time.DateOnly), e.MagnitudeSigma, e.NInterior)

	ev, ind = analyse("NOTILL", 0.12)
	why := strings.Join(ind[0].Reasons, "; ")
	if len(ev) != 0 || !ind[0].TCensored || !strings.Contains(why, "the largest NDTI step") || !strings.Contains(why, "the residue cover of the short series") ||
		!strings.Contains(why, "no portfolio read over the window") {
		t.Errorf("NOTILL alone: events %+v, T censored %v, reasons %q; want no event, censored, the strongest step and the residue cover (no portfolio) in its reasons", ev, ind[0].TCensored, why)
	}
	t.Logf("NOTILL alone: %s", why)
}
