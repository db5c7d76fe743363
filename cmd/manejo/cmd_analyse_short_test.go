package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
)

// TestAnalyseShortWindow (issue 30): a table of one November→May window,
// the columns of short_series_world.py (reflectances, collection, crop,
// clear), 40 points per field, read by two sensors whose NDTI differs by
// 0.03, with an offset shared by every point on each date. manejo analyse
// runs tillage detection for that window: the tilled field gets an event
// inside it, with its evidence (test, drop against its noise, dates each
// side, agreeing points, both sensors); the untilled field gets none and
// says how near it came.
func TestAnalyseShortWindow(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(30, 2026))
	till := time.Date(2020, 4, 10, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	b.WriteString("field_id,point_id,lon,lat,date,collection,crop,clear,red,nir,swir16,swir22\n")
	k := 0
	for d := time.Date(2019, 11, 1, 0, 0, 0, 0, time.UTC); !d.After(time.Date(2020, 5, 20, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 5) {
		coll, bias := "sentinel-2-l2a", 0.0
		if k%3 == 1 {
			coll, bias = "landsat-c2-l2", 0.03
		}
		k++
		for _, f := range []string{"TILLED", "NOTILL"} {
			off := rng.NormFloat64()*0.008 + bias
			for p := range 40 {
				ndti := 0.12 + off + rng.NormFloat64()*0.012
				if f == "TILLED" && !d.Before(till) {
					ndti -= 0.07
				}
				ndvi := 0.2 + rng.NormFloat64()*0.02
				red, s22 := 0.08, 0.15
				nir, s16 := red*(1+ndvi)/(1-ndvi), s22*(1+ndti)/(1-ndti)
				fmt.Fprintf(&b, "%s,%s-p%d,%.5f,42.0,%s,%s,milho,true,%.4f,%.4f,%.4f,%.4f\n", f, f, p, -93.5+float64(p)*0.0005, d.Format(time.DateOnly), coll, red, nir, s16, s22)
			}
		}
	}
	table := filepath.Join(dir, "short.csv")
	if err := os.WriteFile(table, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, stderr := runCLI(t, "analyse", "--observations", table, "--out", out, "--season", "2020/2021", "--as-of", "2020-06-30",
		"--satellite-codes", "sentinel-2-l2a=S01,landsat-c2-l2=S02", "--quiet")
	if code != exitOK && code != exitPartial {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	events, err := export.ReadDataset[export.EventRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].FieldID != "TILLED" {
		t.Fatalf("events %+v, want one, of TILLED", events)
	}
	e := events[0]
	if d := e.Date.Time(); d.Before(till) || d.After(till.AddDate(0, 0, 16)) {
		t.Errorf("event dated %s, want within 16 days after the tillage on %s", e.Date, till.Format(time.DateOnly))
	}
	if e.Test == "" || e.NDTIDrop == nil || e.NDTINoise == nil || math.Abs(float64(*e.NDTIDrop)-0.07) > 0.015 || !(*e.NDTINoise > 0) ||
		e.DatesBefore < 3 || e.DatesAfter < 3 || e.NInterior < 1 {
		t.Errorf("event evidence %+v, want its test, a drop of 0.07 ± 0.015 (sensor offset removed) against a positive noise, ≥ 3 dates each side, agreeing points", e)
	}
	if !slices.Equal(e.Sensors, []string{"landsat-c2-l2", "sentinel-2-l2a"}) {
		t.Errorf("event sensors %v, want both collections", e.Sensors)
	}
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range inds {
		why := strings.Join(r.Reasons, "\n")
		switch r.FieldID {
		case "TILLED":
			if r.TLevel == nil || *r.TLevel != 1 || r.LastEvent == nil {
				t.Errorf("TILLED: T level %v, last event %v, want level 1 from the event", r.TLevel, r.LastEvent)
			}
		case "NOTILL":
			if !r.TCensored || !strings.Contains(why, "T: no tillage event; the largest NDTI step of the short series") {
				t.Errorf("NOTILL: censored %v, reasons %q; want censored and the strongest step said", r.TCensored, why)
			}
		}
	}
}
