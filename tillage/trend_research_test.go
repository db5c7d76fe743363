//go:build research

package tillage

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The step test judged against the piece's longer trend (issue 30,
// session 12, engineer trend; trend.go, docs/tillage.md "The step judged
// against the longer trend"). On the units of TestWindowDrop (US
// field-years and fields, short talhão-seasons, portfolio talhão-seasons),
// Detect with each variant of trendKnobs beside Detect as in the product,
// each beside the plain rule at its own false-positive rate.
//
//	go test -tags research -count=1 -run 'TestStepTrend$' -v ./tillage/ -timeout 1h -usgate.seeds 1,2,3     # the 42-variant grid, dev/tuning
//	go test -tags research -count=1 -run 'TestStepTrend$' -v ./tillage/ -timeout 1h -usgate.seeds 601,602,603 \
//	   -winshort.seeds 109,110,111 -winpf.seeds 109,110,111 -winpf.n 12 -steptrend.v 120:0.4:3:3:mild         # held out, once (spent)

var trendFixed = flag.String("steptrend.v", "", "TestStepTrend: score only these variants, days:rel:z2:zt[:mild] separated by commas, instead of the grid")

// trendGrid are the 42 variants measured on the development seeds
// (docs/tillage.md's grid), in the order they were run, as three runs:
// span 60 / 120 d × gate 0.25 / 0.4 × zt 3 / 4 × mild or not, z2 3 (16);
// 120 d × gate 0.25 / 0.4 × z2 3 / 4 × zt 2 / 2.5 × mild or not (16);
// and ten probing the span (60, 180, 300 d) and a gate of 0.3.
var trendGrid = func() []trendKnobs {
	var g []trendKnobs
	for _, days := range []float64{60, 120} {
		for _, rel := range []float64{0.25, 0.4} {
			for _, zt := range []float64{3, 4} {
				for _, mild := range []bool{false, true} {
					g = append(g, trendKnobs{days: days, rel: rel, z2: 3, zt: zt, mild: mild})
				}
			}
		}
	}
	for _, rel := range []float64{0.25, 0.4} {
		for _, z2 := range []float64{3, 4} {
			for _, zt := range []float64{2, 2.5} {
				for _, mild := range []bool{false, true} {
					g = append(g, trendKnobs{days: 120, rel: rel, z2: z2, zt: zt, mild: mild})
				}
			}
		}
	}
	for _, v := range []string{"300:0.4:3:2.5", "300:0.3:3:2.5", "300:0.3:3:2.5:mild", "180:0.4:3:2.5", "180:0.3:3:2.5",
		"180:0.3:3:2.5:mild", "60:0.4:3:2.5", "120:0.3:3:2.5", "120:0.3:3:2.5:mild", "120:0.3:3:3"} {
		k, err := trendParse(v)
		if err != nil {
			panic(err)
		}
		g = append(g, k)
	}
	return g
}()

func (k trendKnobs) String() string {
	if k.days == 0 {
		return "Detect (product)"
	}
	s := fmt.Sprintf("trend %g d, rel %g, z2 %g, zt %g", k.days, k.rel, k.z2, k.zt)
	if k.mild {
		s += ", mild"
	}
	return s
}

func parseTrend(t *testing.T, v string) trendKnobs {
	k, err := trendParse(v)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// trendParse reads a variant days:rel:z2:zt[:mild].
func trendParse(v string) (trendKnobs, error) {
	var k trendKnobs
	parts := strings.Split(v, ":")
	if len(parts) < 4 {
		return k, fmt.Errorf("trend variant %q: want days:rel:z2:zt[:mild]", v)
	}
	if _, err := fmt.Sscanf(strings.Join(parts[:4], " "), "%g %g %g %g", &k.days, &k.rel, &k.z2, &k.zt); err != nil {
		return k, fmt.Errorf("trend variant %q: %v", v, err)
	}
	k.mild = len(parts) > 4 && parts[4] == "mild"
	return k, nil
}

// -steptrend sets the trend variant of every harness of the run (the
// long worlds' TestAccuracyHarderTillage, TestAccuracy).
func init() {
	flag.Func("steptrend", "tillage harnesses: judge the step test against the longer trend, days:rel:z2:zt[:mild] (product: off)", func(v string) error {
		k, err := trendParse(v)
		stepTrend = k
		return err
	})
}

// trendUnits draws the three worlds' units with Detect's verdicts under
// k; plain holds their plain-rule maxima from a first pass (nil: measure
// them).
func trendUnits(t *testing.T, k trendKnobs, plain []float64) []winUnit {
	old := stepTrend
	stepTrend = k
	defer func() { stepTrend = old }()
	var out []winUnit
	add := func(u winUnit, cells []Cell, _ Params, _, _ time.Time) {
		if plain == nil {
			u.plain = plainMaxT(cells)
		} else {
			u.plain = plain[len(out)]
		}
		out = append(out, u)
	}
	winShortUnits(t, add)
	winPortfolioUnits(t, add)
	winUSUnits(t, add)
	return out
}

// TestStepTrend logs, per world and seed, Detect and each trend variant:
// balanced accuracy, TPR and FPR beside the plain rule at equal FPR
// (field-year and per field, any year, on the US world), and the seeds'
// mean gain over the plain rule and over Detect per world.
func TestStepTrend(t *testing.T) {
	base := trendUnits(t, trendKnobs{}, nil)
	plain := make([]float64, len(base))
	for i, u := range base {
		plain[i] = u.plain
	}
	variants := trendGrid
	if *trendFixed != "" {
		variants = nil
		for _, v := range strings.Split(*trendFixed, ",") {
			variants = append(variants, parseTrend(t, v))
		}
	}
	baseBA := trendReport(t, trendKnobs{}, base, nil)
	for _, k := range variants {
		trendReport(t, k, trendUnits(t, k, plain), baseBA)
	}
}

// trendReport logs one variant's cells and per-world means, and returns
// its balanced accuracy per group.
func trendReport(t *testing.T, k trendKnobs, units []winUnit, baseBA map[string]float64) map[string]float64 {
	groups, keys := winGroups(units)
	flag := func(u winUnit) bool { return u.det }
	ba := map[string]float64{}
	type acc struct{ gain, vsDet, fpr, n float64 }
	worlds := map[string]*acc{}
	var order, parts []string
	score := func(name, world string, us []winUnit, f func(winUnit) bool) {
		tpr, fpr, pb := winScore(us, f)
		b := (tpr + 1 - fpr) / 2
		ba[name] = b
		parts = append(parts, fmt.Sprintf("%s %.3f (TPR %.3f FPR %.3f; plain %.3f %+.3f)", name, b, tpr, fpr, pb, b-pb))
		a := worlds[world]
		if a == nil {
			a = &acc{}
			worlds[world] = a
			order = append(order, world)
		}
		a.gain, a.fpr, a.n = a.gain+b-pb, a.fpr+fpr, a.n+1
		if baseBA != nil {
			a.vsDet += b - baseBA[name]
		}
	}
	for _, key := range keys {
		w := strings.Split(key, " seed ")[0]
		score(key, w, groups[key], flag)
		if strings.HasPrefix(key, "us") {
			fs, ff := winFields(groups[key], flag)
			score(key+" per field", w+" per field", fs, ff)
		}
	}
	var ms []string
	for _, w := range order {
		a := worlds[w]
		ms = append(ms, fmt.Sprintf("%s vs plain %+.3f, vs Detect %+.3f, FPR %.3f", w, a.gain/a.n, a.vsDet/a.n, a.fpr/a.n))
	}
	t.Logf("%s | means: %s | %s", k, strings.Join(ms, "; "), strings.Join(parts, "; "))
	return ba
}

// TestStepTrendDiag lists the step breaks the variant of -steptrend.v
// (default 120:0.25:3:2.5:mild) adds to or removes from the product's on
// the units of TestStepTrend, each with its two flat levels and its drop
// on top of the trend, and counts them by label.
//
//	go test -tags research -count=1 -run 'TestStepTrendDiag$' -v ./tillage/ -usgate.seeds 1,2,3 -steptrend.v 120:0.25:3:2.5:mild
func TestStepTrendDiag(t *testing.T) {
	v := *trendFixed
	if v == "" {
		v = "120:0.25:3:2.5:mild"
	}
	k := parseTrend(t, v)
	old := stepTrend
	defer func() { stepTrend = old }()
	var added, removed [2]int
	add := func(u winUnit, cells []Cell, p Params, lo, hi time.Time) {
		p.tune = p.tune.withDefaults()
		pl := pooled(interiorObs(cells))
		stepTrend = trendKnobs{}
		a := stepBreaks(pl, p)
		stepTrend = k
		b := stepBreaks(pl, p)
		stepTrend = old
		in := func(bs []Break, d time.Time) bool {
			for _, x := range bs {
				if x.Date.Equal(d) {
					return true
				}
			}
			return false
		}
		pos := 0
		if u.pos {
			pos = 1
		}
		for _, x := range a {
			if !in(b, x.Date) {
				removed[pos]++
				t.Logf("%s %d %s pos %v REMOVED %s", u.world, u.seed, u.field, u.pos, trendDescribe(pl, p, x, k))
			}
		}
		for _, x := range b {
			if !in(a, x.Date) {
				added[pos]++
				t.Logf("%s %d %s pos %v ADDED %s", u.world, u.seed, u.field, u.pos, trendDescribe(pl, p, x, k))
			}
		}
	}
	winShortUnits(t, add)
	winPortfolioUnits(t, add)
	winUSUnits(t, add)
	t.Logf("breaks removed NT %d CT %d; added NT %d CT %d", removed[0], removed[1], added[0], added[1])
}

// trendDescribe is a step break's two flat levels (drop, z, share of the
// way to the soil) and its drop on top of the trend of k's span.
func trendDescribe(pl []pooledObs, p Params, x Break, k trendKnobs) string {
	for _, seg := range shortSegments(pl) {
		s := stepSeries(seg, p)
		for j := range s {
			if !s[j].date.Equal(x.Date) {
				continue
			}
			sigma := stepSigma(s, p.MinSigma)
			l, _ := stepAt(s, j, seg, sigma, &p.tune)
			d, se, ok := trendStep(s, j, seg, sigma, k.days, &p.tune)
			xs, _, _ := trendSpan(s, j, seg, k.days, &p.tune)
			return fmt.Sprintf("%s: levels %.3f→%.3f drop %.3f z %.1f rel %.2f | trend drop %.3f se %.4f z %.1f ok %v n %d (piece %s–%s) σ %.4f",
				x.Date.Format("2006-01-02"), l.pre, l.post, l.pre-l.post, (l.pre-l.post)/l.se, (l.pre-l.post)/(l.pre-p.stepSoil()), d, se, d/se, ok, len(xs),
				s[0].date.Format("01-02"), s[len(s)-1].date.Format("01-02"), sigma)
		}
	}
	return x.Date.Format("2006-01-02") + " (not found)"
}
