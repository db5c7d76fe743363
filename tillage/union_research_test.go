//go:build research

package tillage

import (
	"flag"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/num"
)

// Detect ∪ the plain rule at a strict threshold, measured and NOT adopted
// (issue 30, session 11, engineer union; docs/tillage.md "Detect with the
// plain rule at a strict threshold"). On the units of TestWindowDrop (US
// field-years and fields, short talhão-seasons, portfolio talhão-seasons),
// a unit is flagged when Detect flags it or when the plain rule's largest
// drop exceeds t: an absolute drop (plain), t times the talhão's own
// date-to-date noise of its median NDTI (scaled), or the plain rule's
// drop with Detect's canopy and wetting guards (guarded). Each beside the
// plain rule alone at the union's own false-positive rate.
//
//	go test -tags research -count=1 -run 'TestUnionPlain$' -v ./tillage/ -timeout 1h -usgate.seeds 1,2,3       # grid, dev/tuning
//	go test -tags research -count=1 -run 'TestUnionPlain$' -v ./tillage/ -timeout 1h -usgate.seeds 401,402,403 \
//	   -winshort.seeds 103,104,105 -winpf.seeds 103,104,105 -winpf.n 12 -union.t plain:0.06                      # held out, t fixed (run once)

var unionFixed = flag.String("union.t", "", "TestUnionPlain: score only this variant:threshold (e.g. plain:0.06, scaled:4, guarded:0.06) instead of the grid")

// unionVariants are the statistics a unit's plain-rule flag reads, with
// the grid of thresholds measured.
var unionVariants = []struct {
	name string
	stat func(winUnit) float64
	grid []float64
}{
	{"plain", func(u winUnit) float64 { return u.plain }, unionGrid(0.01, 0.12, 0.0025)},
	{"scaled", func(u winUnit) float64 {
		if !(u.noise > 0) {
			return math.Inf(-1)
		}
		return u.plain / u.noise
	}, unionGrid(1, 12, 0.5)},
	{"guarded", func(u winUnit) float64 { return u.guarded }, unionGrid(0.01, 0.12, 0.0025)},
}

func unionGrid(lo, hi, step float64) []float64 {
	var g []float64
	for i := 0; lo+float64(i)*step <= hi+1e-9; i++ {
		g = append(g, math.Round((lo+float64(i)*step)*1e4)/1e4)
	}
	return g
}

// unionCell is one group's score under a rule: balanced accuracy, FPR, and
// the plain rule's balanced accuracy at that FPR; and (field-year or
// talhão-season) the CT and NT units Detect flags beyond the rule's own
// flag, from its base.
type unionCell struct {
	ba, fpr, plain float64
	ct, nt         int
	perField       bool
}

func (c unionCell) String() string {
	s := fmt.Sprintf("%.3f (FPR %.3f; plain %.3f, %+.3f", c.ba, c.fpr, c.plain, c.ba-c.plain)
	if c.perField {
		return s + ")"
	}
	return s + fmt.Sprintf("; Detect adds CT %d NT %d)", c.ct, c.nt)
}

// unionScores scores flag on every group (keys in order); US groups twice,
// field-year and per field.
func unionScores(keys []string, groups map[string][]winUnit, flag, base func(winUnit) bool) ([]string, []unionCell) {
	var names []string
	var cells []unionCell
	for _, k := range keys {
		tpr, fpr, pb := winScore(groups[k], flag)
		c := unionCell{ba: (tpr + 1 - fpr) / 2, fpr: fpr, plain: pb}
		for _, u := range groups[k] {
			if u.det && !base(u) {
				if u.pos {
					c.ct++
				} else {
					c.nt++
				}
			}
		}
		names, cells = append(names, k), append(cells, c)
		if strings.HasPrefix(k, "us") {
			fs, ff := winFields(groups[k], flag)
			tpr, fpr, pb := winScore(fs, ff)
			names, cells = append(names, k+" per field"), append(cells, unionCell{ba: (tpr + 1 - fpr) / 2, fpr: fpr, plain: pb, perField: true})
		}
	}
	return names, cells
}

// TestUnionPlain logs Detect alone and, per variant and threshold, Detect
// ∪ the plain rule beside the plain rule alone at equal false positives
// on every group, with the smallest gain over the groups and over the
// worlds' seed means, and the thresholds that maximise each; or
// (-union.t) the one fixed rule.
func TestUnionPlain(t *testing.T) {
	groups, keys := winGroups(winUnits(t))
	// report logs every group's cell, the smallest gain over the groups
	// (every world and seed) and the smallest over the worlds of their
	// seeds' mean gain (and mean FPR), and returns the two.
	report := func(label string, flag, base func(winUnit) bool) (float64, float64) {
		names, cells := unionScores(keys, groups, flag, base)
		lo := math.Inf(1)
		var parts, worlds []string
		gain, fpr, n := map[string]float64{}, map[string]float64{}, map[string]float64{}
		for i, c := range cells {
			g := c.ba - c.plain
			lo = math.Min(lo, g)
			parts = append(parts, names[i]+" "+c.String())
			w := strings.Split(names[i], " seed ")[0]
			if c.perField {
				w += " per field"
			}
			if n[w] == 0 {
				worlds = append(worlds, w)
			}
			gain[w], fpr[w], n[w] = gain[w]+g, fpr[w]+c.fpr, n[w]+1
		}
		wlo := math.Inf(1)
		var ws []string
		for _, w := range worlds {
			wlo = math.Min(wlo, gain[w]/n[w])
			ws = append(ws, fmt.Sprintf("%s %+.3f (FPR %.3f)", w, gain[w]/n[w], fpr[w]/n[w]))
		}
		t.Logf("%s: smallest gain %+.3f; seeds' mean per world %s, smallest %+.3f | %s", label, lo, strings.Join(ws, ", "), wlo, strings.Join(parts, "; "))
		return lo, wlo
	}
	report("Detect", func(u winUnit) bool { return u.det }, func(winUnit) bool { return false })
	for _, v := range unionVariants {
		grid := v.grid
		if *unionFixed != "" {
			var name string
			var th float64
			if _, err := fmt.Sscanf(strings.Replace(*unionFixed, ":", " ", 1), "%s %g", &name, &th); err != nil {
				t.Fatalf("-union.t %q: %v", *unionFixed, err)
			}
			if name != v.name {
				continue
			}
			grid = []float64{th}
		}
		type best struct{ th, lo, wlo float64 }
		var bs []best
		for _, th := range grid {
			lo, wlo := report(fmt.Sprintf("Detect ∪ %s > %g", v.name, th), func(u winUnit) bool { return u.det || v.stat(u) > th },
				func(u winUnit) bool { return v.stat(u) > th })
			bs = append(bs, best{th, lo, wlo})
		}
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].lo > bs[j].lo })
		t.Logf("%s: largest smallest gain over every world and seed at t = %g (%+.3f; world means' smallest %+.3f)", v.name, bs[0].th, bs[0].lo, bs[0].wlo)
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].wlo > bs[j].wlo })
		t.Logf("%s: largest smallest world mean gain at t = %g (%+.3f; over every world and seed %+.3f)", v.name, bs[0].th, bs[0].wlo, bs[0].lo)
	}
}

// plainNoise is the date-to-date noise of the plain rule's series (median
// NDTI of the interior points on each date whose median NDVI is below
// 0.3): 1.4826 × the median absolute difference of successive dates' /
// √2; 0 when fewer than three dates.
func plainNoise(cells []Cell) float64 {
	_, v := plainSeries(cells)
	var bare []float64
	for _, x := range v {
		if x.ndvi < 0.3 {
			bare = append(bare, x.ndti)
		}
	}
	if len(bare) < 3 {
		return 0
	}
	d := make([]float64, len(bare)-1)
	for i := range d {
		d[i] = math.Abs(bare[i+1] - bare[i])
	}
	return 1.4826 * num.Median(d) / math.Sqrt2
}

// plainDate is one date of the plain rule's series: medians of the
// interior points' NDTI, NDVI, SWIR1+SWIR2 and Red+NIR (NaN when none).
type plainDate struct{ ndti, ndvi, swir, vnir float64 }

// plainSeries is the plain rule's series of cells: every date on which an
// interior point is clear, in order.
func plainSeries(cells []Cell) ([]time.Time, []plainDate) {
	type acc struct{ t, v, s, n []float64 }
	by := map[time.Time]*acc{}
	for _, c := range cells {
		if c.Border {
			continue
		}
		for _, o := range c.Obs {
			if math.IsNaN(o.NDTI) || math.IsNaN(o.NDVI) {
				continue
			}
			a := by[o.Date]
			if a == nil {
				a = &acc{}
				by[o.Date] = a
			}
			a.t, a.v = append(a.t, o.NDTI), append(a.v, o.NDVI)
			if s := o.SWIR1 + o.SWIR2; s > 0 {
				a.s = append(a.s, s)
			}
			if n := o.Red + o.NIR; n > 0 {
				a.n = append(a.n, n)
			}
		}
	}
	dates := make([]time.Time, 0, len(by))
	for d := range by {
		dates = append(dates, d)
	}
	sort.Slice(dates, func(i, j int) bool { return dates[i].Before(dates[j]) })
	out := make([]plainDate, len(dates))
	for i, d := range dates {
		a := by[d]
		out[i] = plainDate{num.Median(a.t), num.Median(a.v), num.Median(a.s), num.Median(a.n)}
	}
	return dates, out
}

// plainGuardedMax is the plain rule's largest firing drop (as plainMaxT:
// three-date medians, both triplets bare, the first within 30 days) over
// the splits Detect's guards would let through: no canopy (median NDVI ≥
// mdCanopyNDVI 0.4) within mdCanopyDays (45) before the split, and not the
// surface getting wet (stepWet's test on the triplets' SWIR and VNIR
// medians); −1 when none.
func plainGuardedMax(cells []Cell) float64 {
	dates, v := plainSeries(cells)
	// med3 is the median of f over the three dates from lo (reflectances:
	// over those that carry them, > 0).
	med3 := func(lo int, f func(plainDate) float64, positive bool) float64 {
		x := make([]float64, 0, 3)
		for i := lo; i < lo+3; i++ {
			if y := f(v[i]); !positive || y > 0 {
				x = append(x, y)
			}
		}
		return num.Median(x)
	}
	tilt := func(p plainDate) float64 { return p.ndti }
	veg := func(p plainDate) float64 { return p.ndvi }
	sw := func(p plainDate) float64 { return p.swir }
	vn := func(p plainDate) float64 { return p.vnir }
	best := -1.0
	for j := 3; j+3 <= len(v); j++ {
		if dates[j-1].Sub(dates[j-3]) > 30*24*time.Hour || med3(j-3, veg, false) >= 0.3 || med3(j, veg, false) >= 0.3 {
			continue
		}
		canopy := false
		for i := j - 1; i >= 0 && dates[j].Sub(dates[i]) <= 45*24*time.Hour; i-- {
			canopy = canopy || v[i].ndvi >= 0.4
		}
		rs, rv := med3(j, sw, true)/med3(j-3, sw, true), med3(j, vn, true)/med3(j-3, vn, true)
		wet := rs < stepWetSWIR && rs < rv-stepWetMargin // false when NaN (no reflectances)
		if !canopy && !wet {
			best = math.Max(best, med3(j-3, tilt, false)-med3(j, tilt, false))
		}
	}
	return best
}
