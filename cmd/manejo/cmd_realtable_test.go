package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
)

// realShapedTable writes a table in the shape of the real US maize fields
// of issue 30: 1 November → late May, Landsat (item ids LE07_…, with
// SLC-off gaps, and LC08_…) and Sentinel-2 readings of the same points,
// crop written in English. TILL has its NDTI drop on 15 April, NOTILL none;
// ALF names a crop manejo does not know.
func realShapedTable(t *testing.T, path string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(30, 1))
	var b strings.Builder
	b.WriteString("field_id,point_id,lon,lat,date,collection,item_id,crop,clear,red,nir,swir16,swir22\n")
	start, end, till := time.Date(2019, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2020, 5, 25, 0, 0, 0, 0, time.UTC), time.Date(2020, 4, 15, 0, 0, 0, 0, time.UTC)
	type pass struct {
		coll, item string
		offset     float64 // cross-sensor NDTI offset
		slcOff     bool
	}
	var passes []struct {
		d time.Time
		p pass
	}
	for d, i := start, 0; !d.After(end); d, i = d.AddDate(0, 0, 8), i+1 {
		p := pass{"landsat-c2-l2", "LC08_L2SP_026031_" + d.Format("20060102"), 0, false}
		if i%2 == 1 {
			p = pass{"landsat-c2-l2", "LE07_L2SP_026031_" + d.Format("20060102"), 0.01, true}
		}
		passes = append(passes, struct {
			d time.Time
			p pass
		}{d, p})
	}
	for d := start.AddDate(0, 0, 2); !d.After(end); d = d.AddDate(0, 0, 5) {
		passes = append(passes, struct {
			d time.Time
			p pass
		}{d, pass{"sentinel-2-l2a", "S2B_MSIL2A_" + d.Format("20060102"), -0.015, false}})
	}
	for k, f := range []struct{ id, crop string }{{"TILL", "corn"}, {"NOTILL", "Maize"}, {"ALF", "alfalfa"}} {
		for _, ps := range passes {
			off := ps.p.offset + rng.NormFloat64()*0.005
			for p := range 20 {
				ndti := 0.12 + off + rng.NormFloat64()*0.01
				if f.id == "TILL" && !ps.d.Before(till) {
					ndti -= 0.08
				}
				clear := !(ps.p.slcOff && p%4 == 0) // SLC-off stripes: a quarter of the points
				s22 := 0.15
				s16, red := s22*(1+ndti)/(1-ndti), 0.08
				nir := red * (1 + 0.2) / (1 - 0.2)
				cells := fmt.Sprintf("true,%.4f,%.4f,%.4f,%.4f", red, nir, s16, s22)
				if !clear {
					cells = "false,,,,"
				}
				fmt.Fprintf(&b, "%s,%sp%d,%.4f,42.0,%s,%s,%s,%s,%s\n", f.id, f.id, p, -93.5+float64(p)*0.0005+float64(k)*0.01,
					ps.d.Format(time.DateOnly), ps.p.coll, ps.p.item, f.crop, cells)
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAnalyseRealShapedTable: a mixed-sensor Nov→May table whose crop is
// written "corn"/"Maize" runs through manejo analyse end to end: every
// talhão ends with T decided or censored (never a missing T), the crop is
// read as milho, both collections are the talhão's sensors; a talhão of an
// unknown crop keeps its T and says why its crop is empty; a collection
// without a satellite code is refused naming the flag and the collection.
func TestAnalyseRealShapedTable(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "obs.csv")
	realShapedTable(t, table)

	code, _, stderr := runCLI(t, "analyse", "--observations", table, "--out", filepath.Join(dir, "nocode"), "--season", "2020/2021",
		"--as-of", "2020-05-25", "--satellite-codes", "landsat-c2-l2=S01", "--quiet")
	if code != exitUsage || !strings.Contains(stderr, "no satellite code for sentinel-2-l2a (--satellite-codes)") {
		t.Errorf("a collection without a code: exit %d, %q; want exit %d naming sentinel-2-l2a and --satellite-codes", code, stderr, exitUsage)
	}

	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "analyse", "--observations", table, "--out", out, "--season", "2020/2021",
		"--as-of", "2020-05-25", "--satellite-codes", "landsat-c2-l2=S01,sentinel-2-l2a=S02", "--quiet")
	// Partial, not failed: the table has no slope_pct (so no payload) and
	// C's three seasons before 2020/21 have no crop cycle to sow against.
	if code != exitPartial || !strings.Contains(stdout, "3 talhões: 0 ok, 3 partial") || !strings.Contains(stderr, "no talhão got a SINM payload") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	m, err := export.ReadManifest(mustOpen(t, filepath.Join(out, "run.json")))
	if err != nil || m.Status.Total != 3 || m.Status.Failed != 0 || m.Status.Partial != 3 {
		t.Fatalf("run.json %+v, %v", m.Status, err)
	}
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(out))
	if err != nil || len(inds) != 3 {
		t.Fatalf("indicators %+v, %v", inds, err)
	}
	wantCrop := map[string]string{"TILL": "milho", "NOTILL": "milho", "ALF": ""}
	for _, ind := range inds {
		reasons := strings.Join(ind.Reasons, "; ")
		t.Logf("%s: crop %q, T years %v, censored %t (≥ %v), level %v, last event %v; reasons: %s", ind.FieldID, ind.Crop,
			deref(ind.TYears), ind.TCensored, deref(ind.TYearsMin), deref(ind.TLevel), ind.LastEvent, reasons)
		if ind.Crop != wantCrop[ind.FieldID] {
			t.Errorf("%s: crop %q, want %q", ind.FieldID, ind.Crop, wantCrop[ind.FieldID])
		}
		if ind.TYears == nil && !(ind.TCensored && ind.TYearsMin != nil) {
			t.Errorf("%s: T neither decided nor censored; reasons %s", ind.FieldID, reasons)
		}
		if ind.TYears != nil && (math.IsNaN(*ind.TYears) || *ind.TYears < 0) {
			t.Errorf("%s: T %v years", ind.FieldID, *ind.TYears)
		}
		if strings.Join(ind.Sensors, ",") != "landsat-c2-l2,sentinel-2-l2a" {
			t.Errorf("%s: sensors %v, want both collections", ind.FieldID, ind.Sensors)
		}
		unknown := strings.Contains(reasons, `crop: talhão ALF: crop "alfalfa": want one of soja, milho`)
		if unknown != (ind.FieldID == "ALF") {
			t.Errorf("%s: reasons %q: the unknown-crop reason belongs to ALF alone", ind.FieldID, reasons)
		}
	}
	events, err := export.ReadDataset[export.EventRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	// The world's truth: TILL's drop on 15 April, seen by the next passes;
	// no drop on NOTILL or ALF.
	tilled := 0
	for _, e := range events {
		t.Logf("event %s %s (%s..%s), %.1f σ, %d points", e.FieldID, e.Date, e.Before, e.After, e.MagnitudeSigma, e.NCells)
		if e.FieldID != "TILL" || e.Date.Time().Before(time.Date(2020, 4, 15, 0, 0, 0, 0, time.UTC)) || e.Date.Time().After(time.Date(2020, 4, 25, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("event %+v: want only TILL's, 15–25 April 2020", e)
		}
		tilled++
	}
	if tilled == 0 {
		t.Error("TILL's drop of 0.08 NDTI (8× the point noise) on 15 April was not found")
	}
	if code, stdout, stderr := runCLI(t, "inspect", out); code != 0 || !strings.Contains(stdout, "ALF") {
		t.Errorf("inspect: exit %d, %q, %q", code, stdout, stderr)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
