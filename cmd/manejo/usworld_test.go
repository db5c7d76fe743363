package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/internal/usworld"
	"github.com/manejo/manejo/tillage"
)

// The independent US-maize world of issue 30 (internal/usworld) run as the
// real set will be judged: one `manejo analyse` per crop year with that
// year's --season and --as-of, events read back from events.parquet, the
// plain rule tillage.MedianNDTIDrop on the same readings beside it. The
// full figures are TestUSWorldAccuracy's (-tags research); here a smoke run.

// usOutcome is one field-year's verdicts.
type usOutcome struct {
	field    string
	ct       bool
	year     int
	visible  bool     // a tillage pass inside the window
	signal   float64  // the window's noise-free NDTI drop (FieldYear.WindowDrop)
	system   string   // the field's tillage system
	after    int      // dates with clear readings after the first pass in the window
	detector bool     // manejo analyse wrote an event
	tests    []string // tests of the events
	onTime   bool     // an event within 20 days after a pass
	plainMax float64  // largest drop at which MedianNDTIDrop still fires (−Inf: never)
}

// analyseUSYear writes the table of fields holding the given crop years
// (the last is the year analysed), runs manejo analyse on it in batches
// with that year's --season and --as-of, and returns each field's events.
func analyseUSYear(t *testing.T, dir string, fields []usworld.Field, years []int, batch int) map[string][]export.EventRow {
	t.Helper()
	cropYear := years[len(years)-1]
	out := map[string][]export.EventRow{}
	for lo := 0; lo < len(fields); lo += batch {
		hi := min(lo+batch, len(fields))
		table := filepath.Join(dir, fmt.Sprintf("us-%d-%03d.csv", cropYear, lo))
		f, err := os.Create(table)
		if err != nil {
			t.Fatal(err)
		}
		if err := usworld.WriteCSV(f, fields[lo:hi], years...); err != nil {
			t.Fatal(err)
		}
		f.Close()
		res := filepath.Join(dir, fmt.Sprintf("out-%d-%03d", cropYear, lo))
		code, stdout, stderr := runCLI(t, "analyse", "--observations", table, "--out", res,
			"--season", fmt.Sprintf("%d/%d", cropYear, cropYear+1), "--as-of", fmt.Sprintf("%d-06-15", cropYear),
			"--satellite-codes", "landsat-c2-l2=S01,sentinel-2-l2a=S02", "--quiet")
		if code != exitOK && code != exitPartial {
			t.Fatalf("analyse %s: exit %d, %s, %s", table, code, stdout, stderr)
		}
		checkUSIndicators(t, res, fields[lo:hi])
		events, err := export.ReadDataset[export.EventRow](os.DirFS(res))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			out[e.FieldID] = append(out[e.FieldID], e)
		}
		os.Remove(table)
		os.RemoveAll(res)
	}
	return out
}

// checkUSIndicators: every field of the table ends with a status and a T
// decided or censored (the judge reads T; it must never be silently absent).
func checkUSIndicators(t *testing.T, res string, fields []usworld.Field) {
	t.Helper()
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(res))
	if err != nil {
		t.Fatal(err)
	}
	if len(inds) != len(fields) {
		t.Fatalf("%s: %d indicator rows for %d fields", res, len(inds), len(fields))
	}
	for _, ind := range inds {
		if ind.Status == "failed" || (ind.TYears == nil && !(ind.TCensored && ind.TYearsMin != nil)) {
			t.Errorf("%s: status %s, T neither decided nor censored; reasons %v", ind.FieldID, ind.Status, ind.Reasons)
		}
	}
}

// usCells is a field-year's readings as tillage cells, NDVI and NDTI
// computed from the bands as the table reader computes them.
func usCells(fy usworld.FieldYear) []tillage.Cell {
	var cells []tillage.Cell
	for p, rs := range fy.ByPoint() {
		if len(rs) == 0 {
			continue
		}
		c := tillage.Cell{ID: fmt.Sprint(p)}
		for _, r := range rs {
			c.Obs = append(c.Obs, tillage.Obs{Date: r.Date(), NDVI: r.NDVI(), NDTI: r.NDTI(),
				Red: float64(r.Red), NIR: float64(r.NIR), SWIR1: float64(r.SWIR16), SWIR2: float64(r.SWIR22), Sensor: r.Sensor.Collection()})
		}
		cells = append(cells, c)
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].ID < cells[j].ID })
	return cells
}

// plainMax is the largest drop at which MedianNDTIDrop still finds a break
// (it fires at drop d when d < plainMax, to within the bisection's 2⁻²⁹;
// testkit.LargestFiring, the bisection the tillage research harnesses use
// too); −Inf when it never fires.
func plainMax(cells []tillage.Cell) float64 {
	return testkit.LargestFiring(func(d float64) bool { return len(tillage.MedianNDTIDrop(cells, d)) > 0 })
}

// usOutcomes runs a world's crop years end to end: one manejo analyse per
// crop year on a table of that year's window alone, or (cumulative) of
// every window up to it. A field-year is flagged when an event falls in
// its window.
func usOutcomes(t *testing.T, dir string, w usworld.World, batch int, cumulative bool) []usOutcome {
	t.Helper()
	var out []usOutcome
	for i, y := range w.Config.Years {
		years := []int{y}
		if cumulative {
			years = w.Config.Years[:i+1]
		}
		events := analyseUSYear(t, dir, w.Fields, years, batch)
		for _, f := range w.Fields {
			fy, _ := f.Year(y)
			o := usOutcome{field: f.ID, ct: f.CT, year: y, visible: fy.InWindow(), signal: fy.WindowDrop, system: f.System,
				after: datesAfterFirstPass(fy), plainMax: plainMax(usCells(fy))}
			for _, e := range events[f.ID] {
				if e.Date.Time().Before(fy.Start) {
					continue // an earlier window's event (cumulative tables)
				}
				o.detector = true
				o.tests = append(o.tests, e.Test)
				for _, p := range fy.Passes {
					if d := e.Date.Time().Sub(p.Date); d >= 0 && d <= 20*24*time.Hour {
						o.onTime = true
					}
				}
			}
			out = append(out, o)
		}
	}
	return out
}

// datesAfterFirstPass counts the dates with clear readings after the
// first tillage pass inside the window (0 without one).
func datesAfterFirstPass(fy usworld.FieldYear) int {
	var first time.Time
	for _, p := range fy.Passes {
		if p.Date.After(fy.Start) && !p.Date.After(fy.End) && (first.IsZero() || p.Date.Before(first)) {
			first = p.Date
		}
	}
	if first.IsZero() {
		return 0
	}
	days := map[int32]bool{}
	for _, r := range fy.Readings {
		if r.Date().After(first) {
			days[r.Day] = true
		}
	}
	return len(days)
}

// confusion counts verdicts against the CT label.
type confusion struct{ tp, fp, fn, tn int }

func (c *confusion) add(ct, flagged bool) {
	switch {
	case ct && flagged:
		c.tp++
	case ct:
		c.fn++
	case flagged:
		c.fp++
	default:
		c.tn++
	}
}

// tpr is the share of CT flagged, fpr of NT flagged (NaN without any).
func (c confusion) tpr() float64 { return float64(c.tp) / float64(c.tp+c.fn) }
func (c confusion) fpr() float64 { return float64(c.fp) / float64(c.fp+c.tn) }

// ba is the balanced accuracy, (TPR + TNR)/2.
func (c confusion) ba() float64 { return (c.tpr() + 1 - c.fpr()) / 2 }

func (c confusion) String() string {
	return fmt.Sprintf("TP %d FP %d FN %d TN %d · BA %.3f · CT flagged %.3f · NT flagged %.3f", c.tp, c.fp, c.fn, c.tn, c.ba(), c.tpr(), c.fpr())
}

// usFieldVerdict folds a field's years: any year flagged, or a majority
// (more than half) of them.
func usFieldVerdict(years []bool, majority bool) bool {
	n := 0
	for _, v := range years {
		if v {
			n++
		}
	}
	if majority {
		return 2*n > len(years)
	}
	return n > 0
}

// foldMax is the drop below which the plain rule flags the field: in any
// year (the largest plainMax), or in a majority of years (the plainMax
// exceeded by more than half the years: the (n/2+1)-th largest).
func foldMax(m []float64, majority bool) float64 {
	s := append([]float64(nil), m...)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	if !majority {
		return s[0]
	}
	k := len(s) / 2 // 0-based index of the (n/2+1)-th largest
	if k >= len(s) {
		return math.Inf(-1)
	}
	return s[k]
}

// TestUSWorldSmoke runs a small US world (6 fields, 25 points, one crop
// year) through manejo analyse end to end: every field ends with a status
// and T decided or censored, and the scoring adds up.
func TestUSWorldSmoke(t *testing.T) {
	w := usworld.Generate(usworld.Config{Seed: 7, Fields: 6, CTShare: 0.5, Years: []int{2018}, Points: 25, Artifacts: usworld.AllArtifacts()})
	outs := usOutcomes(t, t.TempDir(), w, 6, false)
	var c confusion
	for _, o := range outs {
		c.add(o.ct, o.detector)
		t.Logf("%s CT %t visible %t: detector %t %s, plain fires below drop %.3f", o.field, o.ct, o.visible, o.detector, strings.Join(o.tests, ","), o.plainMax)
	}
	if c.tp+c.fp+c.fn+c.tn != 6 || c.tp+c.fn != 3 {
		t.Errorf("confusion %v: want 6 field-years, 3 CT", c)
	}
}

// TestUSScoring pins the scoring on a hand-made table.
func TestUSScoring(t *testing.T) {
	var c confusion
	for _, v := range []struct{ ct, flag bool }{{true, true}, {true, false}, {false, false}, {false, false}, {false, true}} {
		c.add(v.ct, v.flag)
	}
	if c.tp != 1 || c.fn != 1 || c.tn != 2 || c.fp != 1 || math.Abs(c.ba()-(0.5+2.0/3)/2) > 1e-12 {
		t.Errorf("confusion %v", c)
	}
	if !usFieldVerdict([]bool{false, true, false, false}, false) || usFieldVerdict([]bool{true, true, false, false}, true) ||
		!usFieldVerdict([]bool{true, true, true, false}, true) {
		t.Error("field verdicts: any / majority wrong")
	}
	// foldMax: the plain rule flags a field at drop d when foldMax > d,
	// which must be usFieldVerdict of its years flagged at d.
	for _, c := range []struct {
		m             []float64
		anyYr, majYrs float64
	}{
		{[]float64{0.03, 0.08, 0.01, 0.05}, 0.08, 0.03}, // n = 4: 3 years must exceed d
		{[]float64{0.02, 0.07, 0.04}, 0.07, 0.04},       // n = 3: 2 years
		{[]float64{0.06}, 0.06, 0.06},
	} {
		if a, m := foldMax(c.m, false), foldMax(c.m, true); a != c.anyYr || m != c.majYrs {
			t.Errorf("foldMax(%v) = any %v, majority %v; want %v, %v", c.m, a, m, c.anyYr, c.majYrs)
		}
		for _, d := range []float64{0, 0.015, 0.025, 0.035, 0.045, 0.055, 0.065, 0.075, 0.09} {
			var years []bool
			for _, v := range c.m {
				years = append(years, v > d)
			}
			for _, maj := range []bool{false, true} {
				if got, want := foldMax(c.m, maj) > d, usFieldVerdict(years, maj); got != want {
					t.Errorf("foldMax(%v, majority %t) > %v is %t; the field's years %v give %t", c.m, maj, d, got, years, want)
				}
			}
		}
	}
}
