//go:build research

package tillage

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/manejo/manejo/internal/usworld"
)

// The step test on the independent US-maize world (internal/usworld,
// issue 30): why its moderate drops are missed, and what the step test's
// relative gate is worth there. The portfolio is built as manejo analyse
// builds it (one per crop year and batch of 40 fields), so the figures
// match cmd/manejo's TestUSWorldAccuracy to within its rounding.
//
//	go test -tags research -count=1 -run 'TestUSWorldStep' -v ./tillage/ -timeout 1h -usgate.seeds 1,2,3

var usGateSeeds = flag.String("usgate.seeds", "1,2,3", "seeds of the US-maize world for TestUSWorldStep* (tuning: 1,2,3)")

func usGateSeedList(t *testing.T) []uint64 {
	var out []uint64
	for _, s := range strings.Split(*usGateSeeds, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// usTillCells is a field-year's readings as cells, as cmd/manejo's usCells
// builds them (the table reader's indices).
func usTillCells(fy usworld.FieldYear) []Cell {
	var cells []Cell
	for p, rs := range fy.ByPoint() {
		if len(rs) == 0 {
			continue
		}
		c := Cell{ID: fmt.Sprint(p)}
		for _, r := range rs {
			c.Obs = append(c.Obs, Obs{Date: r.Date(), NDVI: r.NDVI(), NDTI: r.NDTI(),
				Red: float64(r.Red), NIR: float64(r.NIR), SWIR1: float64(r.SWIR16), SWIR2: float64(r.SWIR22), Sensor: r.Sensor.Collection()})
		}
		cells = append(cells, c)
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].ID < cells[j].ID })
	return cells
}

// usVerdict is one field-year: its label, its noise-free window drop and
// whether Detect (with the analyse portfolio) flags it.
type usVerdict struct {
	ct      bool
	drop    float64
	flagged bool
	cells   []Cell
	p       Params
}

// usVerdicts runs Detect on every field-year of w with the portfolio of
// its batch of 40 fields, stepRel the step test's relative gate (0:
// default).
func usVerdicts(w usworld.World, stepRel float64) []usVerdict {
	return usVerdictsTuned(w, func(t *tuning, _ usworld.Field) { t.stepRel = stepRel })
}

// usVerdictsTuned is usVerdicts with the tuning set by tune (per field).
func usVerdictsTuned(w usworld.World, tune func(*tuning, usworld.Field)) []usVerdict {
	var out []usVerdict
	for _, y := range w.Config.Years {
		for lo := 0; lo < len(w.Fields); lo += 40 {
			fs := w.Fields[lo:min(lo+40, len(w.Fields))]
			cells := make([][]Cell, len(fs))
			ms := make([]Medians, len(fs))
			for i, f := range fs {
				fy, _ := f.Year(y)
				cells[i] = usTillCells(fy)
				ms[i] = NewMedians(cells[i], DefaultParams())
			}
			pfs := NewPortfolios(ms)
			for i, f := range fs {
				fy, _ := f.Year(y)
				p := Calibrate(cells[i], DefaultParams()).WithPortfolio(&pfs[i])
				tune(&p.tune, f)
				out = append(out, usVerdict{ct: f.CT, drop: fy.WindowDrop, flagged: len(Detect(cells[i], p)) > 0, cells: cells[i], p: p})
			}
		}
	}
	return out
}

// stepRejection names what stops the step test's best split (largest z)
// on the pooled series: the first failing guard of stepBreaksIn (", z ≤ K
// too" when the split would not reach stepK either), "" when it passes,
// "none" when no split can be measured.
func stepRejection(cells []Cell, p Params) (string, float64) {
	p.tune = p.tune.withDefaults()
	t := &p.tune
	why, bestZ := "none", math.Inf(-1)
	for _, seg := range shortSegments(pooled(interiorObs(cells))) {
		s := stepSeries(seg, p)
		if len(s) < stepMinPre+stepMinPost {
			continue
		}
		sigma := stepSigma(s, p.MinSigma)
		for j := range s {
			l, ok := stepAt(s, j, seg, sigma, t)
			z := (l.pre - l.post) / l.se
			if !ok || !(z > bestZ) {
				continue
			}
			bestZ = z
			switch {
			case canopyBefore(seg, s[j].date, t):
				why = "canopy before"
			case l.pre-l.post < t.stepRel*(l.pre-p.stepSoil()):
				why = "relative gate"
			case stepLate(s, j, l):
				why = "late (1 date before)"
			case z <= stepK:
				why = "z ≤ K"
			case stepIsRamp(s, j, l, sigma):
				why = "ramp"
			case stepRecovers(s, j, l, seg, t):
				why = "recovers"
			case stepWet(s, j, l):
				why = "wet"
			case p.portfolio.stepsAlike(s[j].date, l):
				why = "portfolio alike"
			default:
				why = ""
			}
			if z <= stepK && why != "z ≤ K" {
				why += ", z ≤ K too"
			}
		}
	}
	return why, bestZ
}

// TestUSWorldStepGuards: for the CT field-years of the clean world (every
// artifact off but cloud masking) and of the full one whose window holds a noise-free drop of
// at least 0.03 and that Detect misses, the guard that stops the step
// test's best split.
func TestUSWorldStepGuards(t *testing.T) {
	for _, seed := range usGateSeedList(t) {
		for _, world := range usGateWorlds {
			usStepGuards(t, seed, world.name, usworld.Generate(usworld.Config{Seed: seed, Artifacts: world.a}))
		}
	}
}

// usGateWorlds are the US world's clean (every artifact off but cloud
// masking) and full versions.
var usGateWorlds = []struct {
	name string
	a    usworld.Artifacts
}{{"clean", usworld.Artifacts{Clouds: true}}, {"full", usworld.AllArtifacts()}}

// usStepGuards logs TestUSWorldStepGuards' tally for one world.
func usStepGuards(t *testing.T, seed uint64, name string, w usworld.World) {
	count := map[string]int{}
	var hit, miss int
	for _, v := range usVerdicts(w, 0) {
		if !v.ct || v.drop < 0.03 {
			continue
		}
		if v.flagged {
			hit++
			continue
		}
		miss++
		why, _ := stepRejection(v.cells, v.p)
		count[why]++
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(count)) {
		fmt.Fprintf(&b, " %s %d;", k, count[k])
	}
	t.Logf("seed %d %s world, CT field-years with window drop ≥ 0.03: found %d, missed %d; best split stopped by:%s", seed, name, hit, miss, b.String())
}

// TestUSWorldStepGate: field-year TPR / FPR / BA of Detect with the step
// test's relative gate at its default (0.4) and at 0.25 (a chisel or disk
// pass on maize stover buries as little as a quarter of the cover), on the
// clean world and the full one.
func TestUSWorldStepGate(t *testing.T) {
	for _, seed := range usGateSeedList(t) {
		for _, world := range usGateWorlds {
			w := usworld.Generate(usworld.Config{Seed: seed, Artifacts: world.a})
			for _, gate := range []float64{0.4, 0.25} {
				var c struct{ tp, fn, fp, tn int }
				for _, v := range usVerdicts(w, gate) {
					switch {
					case v.ct && v.flagged:
						c.tp++
					case v.ct:
						c.fn++
					case v.flagged:
						c.fp++
					default:
						c.tn++
					}
				}
				tpr, fpr := float64(c.tp)/float64(c.tp+c.fn), float64(c.fp)/float64(c.fp+c.tn)
				t.Logf("seed %d %s world, step gate %.2f: field-years TPR %.3f FPR %.3f BA %.3f (TP %d FN %d FP %d TN %d)",
					seed, world.name, gate, tpr, fpr, (tpr+1-fpr)/2, c.tp, c.fn, c.fp, c.tn)
			}
		}
	}
}
