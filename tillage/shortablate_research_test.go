//go:build research

package tillage

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// What each of the short world's nuisances costs the detector (issue 30,
// session 12, engineer shortablate; docs/tillage.md "What each nuisance
// costs"). A diagnostic: nothing in the product changes. TestShortAblation
// draws the short world's tuning seeds with its nuisances turned off
// (swAblate, shortworld_test.go) and scores Detect on each variant beside
// the plain rule at equal false positives (testkit.ThresholdAtFP on the
// same talhões, winScore):
//
//	go test -tags research -count=1 -run 'TestShortAblation$' -v ./tillage/ -shortablate all -timeout 30m
//	go test -tags research -count=1 -run 'TestShortAblation$' -v ./tillage/ -shortablate 'every,but:wet,but:snow' -timeout 30m
//
// -shortablate is a comma list of variants: a nuisance's name (turned off
// alone), names joined by '+' (turned off together; spared stands for the
// nuisances the ceiling's oracles are spared), all (each nuisance
// off in turn), every (all of them off) or but:NAME (every nuisance off
// but NAME; but:a+b: but a and b). Held-out seeds (above 100) are refused: this is a tuning-seed
// diagnostic.

var (
	shortAblate      = flag.String("shortablate", "all", "TestShortAblation: the short world's variants (names, a+b, spared, all, every, but:name, but:a+b)")
	shortAblateSeeds = flag.String("shortablate.seeds", "1,2", "TestShortAblation: short-world tuning seeds (held-out seeds, above 100, are refused)")
)

// shortAblationNames are the nuisances swAblate turns off, in the order
// all runs them.
var shortAblationNames = []string{"sensor", "dategain", "slc", "clouds", "snow", "haze", "edge", "wet", "weather", "green", "noise", "hetero", "autumn"}

// shortOracleSpared (the name spared in a variant) are the nuisances the
// ceiling's oracles are spared (shortceiling_test.go: noise-free field
// spectra with green removed, no snow, haze or sensor gain); they keep
// the clouds, SLC-off gaps, per-date gains, wetness, weathering and
// autumn passes before the window.
var shortOracleSpared = []string{"sensor", "snow", "haze", "edge", "green", "noise", "hetero"}

// set turns the named nuisance off; false for an unknown name.
func (a *shortAblation) set(name string) bool {
	f := map[string]*bool{"sensor": &a.sensor, "dategain": &a.dategain, "slc": &a.slc, "clouds": &a.clouds,
		"snow": &a.snow, "haze": &a.haze, "edge": &a.edge, "wet": &a.wet, "weather": &a.weather,
		"green": &a.green, "noise": &a.noise, "hetero": &a.hetero, "autumn": &a.autumn}[name]
	if f == nil {
		return false
	}
	*f = true
	return true
}

// shortAblationVariant is one labelled ablation.
type shortAblationVariant struct {
	label string
	a     shortAblation
}

// shortAblationVariants parses -shortablate.
func shortAblationVariants(spec string) ([]shortAblationVariant, error) {
	var out []shortAblationVariant
	off := func(label string, names ...string) error {
		v := shortAblationVariant{label: label, a: shortAblation{on: true}}
		for _, n := range names {
			if !v.a.set(n) {
				return fmt.Errorf("-shortablate: unknown nuisance %q (known: %s)", n, strings.Join(shortAblationNames, ", "))
			}
		}
		out = append(out, v)
		return nil
	}
	for _, e := range strings.Split(spec, ",") {
		var err error
		switch e = strings.TrimSpace(e); {
		case e == "":
		case e == "all":
			for _, n := range shortAblationNames {
				if err = off(n+" off", n); err != nil {
					break
				}
			}
		case e == "every":
			err = off("every nuisance off", shortAblationNames...)
		case strings.HasPrefix(e, "but:"):
			keep := strings.Split(strings.TrimPrefix(e, "but:"), "+")
			var names []string
			for _, n := range shortAblationNames {
				if !slices.Contains(keep, n) {
					names = append(names, n)
				}
			}
			if len(names) != len(shortAblationNames)-len(keep) {
				err = fmt.Errorf("-shortablate: unknown or repeated nuisance in %q", e)
				break
			}
			err = off("every nuisance off but "+strings.Join(keep, " + "), names...)
		default:
			var names []string
			for _, n := range strings.Split(e, "+") {
				if n == "spared" {
					names = append(names, shortOracleSpared...)
				} else {
					names = append(names, n)
				}
			}
			err = off(strings.ReplaceAll(e, "+", " + ")+" off", names...)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// shortAblationUnits draws and scores one seed's talhão-seasons under
// the ablation a: Detect's verdict and the plain rule's largest firing
// drop.
func shortAblationUnits(seed uint64, a shortAblation) []winUnit {
	defer func(old shortAblation) { swAblate = old }(swAblate)
	swAblate = a
	var us []winUnit
	shortUnits([]uint64{seed}, func(u winUnit, cells []Cell, _ Params, _, _ time.Time) {
		u.plain = plainMaxT(cells)
		us = append(us, u)
	})
	return us
}

// shortAblationLine is one variant's score: Detect's balanced accuracy,
// TPR and FPR with the positives and negatives scored, the plain rule's
// balanced accuracy at Detect's false positives, and, against the
// reference ref (the same draws with nothing off; nil: none), the
// balanced accuracy's change and, over the talhões scored in both, the
// positives (CT) and negatives (NT) Detect newly flags and no longer
// flags (with autumn off, talhões tilled before the window are scored).
func shortAblationLine(us, ref []winUnit) string {
	tpr, fpr, plain := winScore(us, func(u winUnit) bool { return u.det })
	ba := (tpr + 1 - fpr) / 2
	var pos int
	for _, u := range us {
		if u.pos {
			pos++
		}
	}
	s := fmt.Sprintf("Detect %.3f (TPR %.3f FPR %.3f; %d + %d scored), plain at equal FPR %.3f (%+.3f)", ba, tpr, fpr, pos, len(us)-pos, plain, ba-plain)
	if ref == nil {
		return s
	}
	before := map[string]winUnit{}
	for _, u := range ref {
		before[u.field] = u
	}
	var f [4]int // CT +, CT −, NT +, NT −
	var fresh int
	for _, u := range us {
		r, ok := before[u.field]
		if !ok || r.pos != u.pos {
			fresh++
			continue
		}
		if u.det != r.det {
			k := 0
			if !u.pos {
				k = 2
			}
			if !u.det {
				k++
			}
			f[k]++
		}
	}
	rt, rf, _ := winScore(ref, func(u winUnit) bool { return u.det })
	s += fmt.Sprintf(", %+.3f vs nothing off (CT +%d −%d, NT +%d −%d", ba-(rt+1-rf)/2, f[0], f[1], f[2], f[3])
	if fresh > 0 {
		s += fmt.Sprintf("; %d talhões newly scored or relabelled", fresh)
	}
	return s + ")"
}

// TestShortAblation logs, per tuning seed, Detect on the world as drawn
// (the harness's figures), on the ablation stream with nothing off (the
// reference of every variant: the same talhões, passes and noise), and on
// each variant of -shortablate, beside the plain rule at equal false
// positives and against the reference.
func TestShortAblation(t *testing.T) {
	vs, err := shortAblationVariants(*shortAblate)
	if err != nil {
		t.Fatal(err)
	}
	vs = append([]shortAblationVariant{{"as drawn (the harness)", shortAblation{}}, {"nothing off (ablation stream)", shortAblation{on: true}}}, vs...)
	for _, seed := range seedList(t, *shortAblateSeeds) {
		if seed > 100 {
			t.Fatalf("seed %d: held-out seeds are not for this diagnostic (tuning seeds 1, 2)", seed)
		}
		var ref []winUnit
		for k, v := range vs {
			t0 := time.Now()
			us := shortAblationUnits(seed, v.a)
			line := shortAblationLine(us, nil)
			if k > 1 {
				line = shortAblationLine(us, ref)
			}
			if k == 1 {
				ref = us
			}
			t.Logf("seed %d, %d + %d talhão-seasons, %-36s: %s [%.0f s]", seed, *shortN, *shortN, v.label, line, time.Since(t0).Seconds())
		}
	}
}

// TestShortAblationVariants pins -shortablate's parsing.
func TestShortAblationVariants(t *testing.T) {
	vs, err := shortAblationVariants("all,wet+snow,every,but:wet,but:wet+clouds,spared+wet")
	if err != nil {
		t.Fatal(err)
	}
	n := len(shortAblationNames)
	if len(vs) != n+5 {
		t.Fatalf("%d variants, want %d", len(vs), n+5)
	}
	if sp := vs[n+4].a; !sp.wet || !sp.sensor || !sp.hetero || !sp.snow || sp.dategain || sp.clouds || sp.weather {
		t.Errorf("spared+wet %+v", sp)
	}
	if b2 := vs[n+3].a; b2.wet || b2.clouds || !b2.snow || !b2.sensor {
		t.Errorf("but:wet+clouds %+v", b2)
	}
	if w := vs[n]; !w.a.on || !w.a.wet || !w.a.snow || w.a.clouds {
		t.Errorf("wet+snow: %+v", w.a)
	}
	every, but := vs[n+1].a, vs[n+2].a
	if !every.wet || !every.autumn || !every.sensor || but.wet || !but.snow || !but.autumn {
		t.Errorf("every %+v, but:wet %+v", every, but)
	}
	for _, bad := range []string{"rain", "but:rain", "wet+rain", "but:wet+wet", "but:wet+rain"} {
		if _, err := shortAblationVariants(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestShortAblationDraws: with the ablation stream on, every variant
// draws the same talhões (the same tillages, but autumn's, and the same
// passes), and each nuisance turned off changes some reading or mask of
// the first conventional and no-till talhões of seed 1.
func TestShortAblationDraws(t *testing.T) {
	defer func(old shortAblation) { swAblate = old }(swAblate)
	draw := func(a shortAblation) []shortTalhao {
		swAblate = a
		rng := rand.New(rand.NewPCG(1, 0x5407))
		var w shortWorld
		var out []shortTalhao
		for i := range 8 {
			out = append(out, w.draw(rng, i%2 == 0))
		}
		return out
	}
	ref := draw(shortAblation{on: true})
	for _, n := range shortAblationNames {
		a := shortAblation{on: true}
		a.set(n)
		changed := false
		for k, st := range draw(a) {
			r := ref[k]
			if len(st.cells) != len(r.cells) || (n != "autumn" && !slices.Equal(st.tillage, r.tillage)) {
				t.Fatalf("%s off: talhão %d drawn apart (%d / %d points, tillage %v / %v)", n, k, len(st.cells), len(r.cells), st.tillage, r.tillage)
			}
			for p := range st.cells {
				if len(st.cells[p].Obs) != len(r.cells[p].Obs) {
					t.Fatalf("%s off: talhão %d point %d has %d dates, %d with nothing off", n, k, p, len(st.cells[p].Obs), len(r.cells[p].Obs))
				}
				for j, o := range st.cells[p].Obs {
					x := r.cells[p].Obs[j]
					changed = changed || !o.Date.Equal(x.Date) || math.IsNaN(o.NDTI) != math.IsNaN(x.NDTI) || (!math.IsNaN(o.NDTI) && o.NDTI != x.NDTI)
				}
			}
			changed = changed || !slices.Equal(st.tillage, r.tillage)
		}
		if !changed {
			t.Errorf("%s off: no reading, mask or tillage changed", n)
		}
	}
}
