//go:build research

package main

import (
	"flag"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/internal/usworld"
)

var (
	usSeeds    = flag.String("usworld.seeds", "1,2,3", "seeds of the independent US world (issue 30)")
	usFields   = flag.Int("usworld.fields", 120, "fields per seed")
	usCT       = flag.Float64("usworld.ct", 0.2, "share of conventional-till fields")
	usAblate   = flag.String("usworld.ablate", "none", "comma-separated artifacts to turn off in turn (none = the full world; all = each artifact in turn): snow, offsets, slcoff, fallbefore, leaks, moisture, scenenoise, clouds, green, aging, allbutclouds")
	usPerField = flag.Bool("usworld.perfield", false, "log every field-year")
	usCumul    = flag.Bool("usworld.cumulative", false, "each crop year's table holds every window up to it (else that window alone)")
	usWide     = flag.Bool("usworld.widecontrast", false, "fresh stover SWIR2/SWIR1 drawn over 0.54–0.76, not 0.64–0.76 (review s10 F8)")
)

// ablation returns the world's artifacts with one turned off.
func ablation(name string) (usworld.Artifacts, bool) {
	a := usworld.AllArtifacts()
	switch name {
	case "none":
	case "snow":
		a.Snow = false
	case "offsets":
		a.Offsets = false
	case "slcoff":
		a.SLCOff = false
	case "fallbefore":
		a.FallBeforeWindow = false
	case "leaks":
		a.Leaks = false
	case "moisture":
		a.Moisture = false
	case "scenenoise":
		a.SceneNoise = false
	case "clouds":
		a.Clouds = false
	case "green":
		a.Green = false
	case "aging":
		a.Aging = false
	case "allbutclouds": // every artifact off but the cloud masking: the plainest real-shaped world
		a = usworld.Artifacts{Clouds: true}
	default:
		return a, false
	}
	return a, true
}

// TestUSWorldAccuracy: the independent US-maize world of issue 30, end to
// end through manejo analyse, detector beside the plain rule, per
// field-year and per field, for each seed and each ablation asked for.
//
//	go test -tags research -count=1 -run TestUSWorldAccuracy -v ./cmd/manejo/ -timeout 2h \
//	   -usworld.seeds 1,2,3 -usworld.fields 120 -usworld.ct 0.2 -usworld.ablate none
func TestUSWorldAccuracy(t *testing.T) {
	names := strings.Split(*usAblate, ",")
	if *usAblate == "all" {
		names = []string{"none", "snow", "offsets", "slcoff", "fallbefore", "leaks", "moisture", "scenenoise", "clouds", "green", "aging", "allbutclouds"}
	}
	for _, s := range strings.Split(*usSeeds, ",") {
		seed, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			a, ok := ablation(strings.TrimSpace(name))
			if !ok {
				t.Fatalf("unknown ablation %q", name)
			}
			w := usworld.Generate(usworld.Config{Seed: seed, Fields: *usFields, CTShare: *usCT, Artifacts: a, WideContrast: *usWide})
			outs := usOutcomes(t, t.TempDir(), w, 40, *usCumul)
			reportUS(t, fmt.Sprintf("seed %d, CT %.2f, cumulative %t, wide contrast %t, off: %s", seed, *usCT, *usCumul, *usWide, name), outs)
		}
	}
}

// reportUS logs the detector and the plain rule per field-year and per field.
func reportUS(t *testing.T, label string, outs []usOutcome) {
	var det confusion
	tests := map[string]int{}
	visible, onTime := 0, 0
	var ntMax []float64
	for _, o := range outs {
		det.add(o.ct, o.detector)
		for _, ts := range o.tests {
			tests[ts]++
		}
		if o.ct && o.visible {
			visible++
		}
		if o.ct && o.onTime {
			onTime++
		}
		if !o.ct {
			ntMax = append(ntMax, o.plainMax)
		}
		if *usPerField {
			t.Logf("FY %s|%s|%d|%t|%s|%t|%.3f|%d|%t|%v|%t|%.3f", label, o.field, o.year, o.ct, o.system, o.visible, o.signal, o.after, o.detector, o.tests, o.onTime, o.plainMax)
		}
	}
	t.Logf("== %s: %d field-years (%d CT, %d of them with a pass in the window; detector on time in %d)", label, len(outs), det.tp+det.fn, visible, onTime)
	t.Logf("   field-year  detector      %v; tests %v", det, tests)
	matched := testkit.ThresholdAtFP(ntMax, det.fp)
	for i, d := range []float64{0.04, 0.05, 0.06, matched} {
		var c confusion
		for _, o := range outs {
			c.add(o.ct, o.plainMax > d)
		}
		name := fmt.Sprintf("plain %.3f", d)
		if i == 3 {
			name = fmt.Sprintf("plain@FPR %.3f", d)
		}
		t.Logf("   field-year  %-13s %v", name, c)
	}
	reportUSSignal(t, outs, matched)
	reportUSFields(t, outs)
}

// reportUSSignal logs the share of CT field-years flagged by the size of
// the tillage signal their window holds (noise-free NDTI drop).
func reportUSSignal(t *testing.T, outs []usOutcome, matched float64) {
	edges := []float64{math.Inf(-1), 0.02, 0.04, 0.06, 0.08, math.Inf(1)}
	var parts []string
	for i := 0; i+1 < len(edges); i++ {
		n, d, p := 0, 0, 0
		for _, o := range outs {
			if o.ct && o.signal >= edges[i] && o.signal < edges[i+1] {
				n++
				if o.detector {
					d++
				}
				if o.plainMax > matched {
					p++
				}
			}
		}
		parts = append(parts, fmt.Sprintf("[%.2f,%.2f): %d, detector %d, plain@FPR %d", edges[i], edges[i+1], n, d, p))
	}
	t.Logf("   CT field-years by window signal (NDTI drop): %s", strings.Join(parts, "; "))
}

// reportUSFields folds the years of each field (any year; majority).
func reportUSFields(t *testing.T, outs []usOutcome) {
	type fieldYears struct {
		ct       bool
		det      []bool
		plainMax []float64
	}
	by := map[string]*fieldYears{}
	var ids []string
	for _, o := range outs {
		f, ok := by[o.field]
		if !ok {
			f = &fieldYears{ct: o.ct}
			by[o.field] = f
			ids = append(ids, o.field)
		}
		f.det = append(f.det, o.detector)
		f.plainMax = append(f.plainMax, o.plainMax)
	}
	sort.Strings(ids)
	for _, majority := range []bool{false, true} {
		kind := "any year"
		if majority {
			kind = "majority"
		}
		var det confusion
		var ntMax []float64
		for _, id := range ids {
			f := by[id]
			det.add(f.ct, usFieldVerdict(f.det, majority))
			if !f.ct {
				ntMax = append(ntMax, foldMax(f.plainMax, majority))
			}
		}
		t.Logf("   field %-8s detector      %v", kind, det)
		for i, d := range []float64{0.04, 0.05, 0.06, testkit.ThresholdAtFP(ntMax, det.fp)} {
			var c confusion
			for _, id := range ids {
				c.add(by[id].ct, foldMax(by[id].plainMax, majority) > d)
			}
			name := fmt.Sprintf("plain %.3f", d)
			if i == 3 {
				name = fmt.Sprintf("plain@FPR %.3f", d)
			}
			t.Logf("   field %-8s %-13s %v", kind, name, c)
		}
	}
}
