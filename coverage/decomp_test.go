//go:build research

package coverage

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/spectral"
	"github.com/manejo/manejo/zarc"
)

var (
	strawDecomp       = flag.String("strawdecomp", "", "diagnostics: TestStrawDecomposition's runs, comma-separated, each a '+'-joined set of base, noise, haze, dry, clear, soil, straw, sow, wetmask, or every-term-term… (every term removed but those), or all")
	strawDecompUndecl = flag.Bool("strawdecompundeclared", false, "diagnostics: TestStrawDecomposition without the declared crop history")
)

// decompTerms are the terms TestStrawDecomposition can remove, by name:
// world-side (the readings change, the truth does not) and
// estimator-side (what the calibrated reading is given).
var decompTerms = []string{"noise", "haze", "dry", "clear", "soil", "straw", "sow", "wetmask"}

// TestStrawDecomposition splits the harder world's straw-cover error
// into terms on the calibrated reading itself (-strawdecomp; tuning seed
// -hardtune, -hardtunen talhões × 6 cells, the crop history declared unless
// -strawdecompundeclared). Every run observes the same talhões again with
// a per-talhão generator ("base": nothing removed), so the runs differ by
// the removed terms only:
//   - noise: no additive reflectance noise (pheno's 2 % multiplicative
//     term stays);
//   - haze: no unflagged cloud or shadow in the clear readings;
//   - dry: the surface never wets (pheno.Scenario.Dried);
//   - wetmask: a pass whose surface is wet (wetness > 0.1) is masked as
//     a cloud (what a perfect wet-date detector could do by leaving them
//     out; not in "every", which removes the wetness itself);
//   - clear: no cloudy pass (pheno.Scenario.Unclouded, cloud scale ≈ 0);
//   - soil: the talhão's true dry soil as its soil endmember;
//   - straw: each season read with its true ground-straw spectrum, its
//     prior centred on the true NDTI (sd 0.01);
//   - sow: the true sowing dates declared.
//
// It also prints how the seasons' errors correlate within a talhão and the
// error by what happens in the window (standing dry canopy, tillage, clear
// dates).
func TestStrawDecomposition(t *testing.T) {
	if *strawDecomp == "" {
		t.Skip("diagnostics: run with -strawdecomp all (or a list)")
	}
	defer func() { oracleSoil, oraclePrior, oracleStraw = nil, nil, nil }()
	runs := strings.Split(*strawDecomp, ",")
	if *strawDecomp == "all" {
		runs = append([]string{"base"}, decompTerms...)
		runs = append(runs, "noise+haze+dry+clear", "soil+straw", "soil+straw+sow", "noise+haze+dry+clear+soil+straw+sow")
	}
	for _, run := range runs {
		on, err := decompRun(run)
		if err != nil {
			t.Fatal(err)
		}
		var fields []synthField
		k := 0
		dates := pheno.Revisit(day("2022-07-01"), day("2026-07-31"), 5)
		hook := func(f synthField) {
			decompWorld(f, on, dates, rand.New(rand.NewPCG(*hardTuneSeed, uint64(7000+k))))
			k++
			decompEstimator(f, on)
			fields = append(fields, f)
		}
		r := runHarderHook(*hardTuneN, 6, *hardTuneSeed, pheno.SpectraVaried, nil, !*strawDecompUndecl, hook, on["sow"])
		r.readings = []readingRec{{0, 0, 0}, {1, 1, 1}}
		t.Logf("run %q (declared %v), tuning seed %d, %d talhões × 6 cells:\n%v\n%s", run, !*strawDecompUndecl, *hardTuneSeed, *hardTuneN, summarise(r), decompSplit(r, fields))
	}
}

// decompRun is the terms a run removes: a '+'-joined list of terms
// ("base" removes none), or "every" (every term but wetmask) followed by
// "-term"s put back and "+term"s added ("every-noise": every term removed
// but the noise; "every-dry+wetmask").
func decompRun(run string) (map[string]bool, error) {
	on := map[string]bool{}
	rest, every := strings.CutPrefix(run, "every")
	if !every {
		rest = "+" + run
	}
	for _, term := range decompTerms {
		on[term] = every && term != "wetmask"
	}
	for rest != "" {
		op := rest[0]
		rest = rest[1:]
		i := strings.IndexAny(rest, "+-")
		if i < 0 {
			i = len(rest)
		}
		term := rest[:i]
		rest = rest[i:]
		if _, ok := on[term]; !ok && term != "base" {
			return nil, fmt.Errorf("unknown term %q in %q", term, run)
		}
		on[term] = op == '+'
	}
	return on, nil
}

// decompWorld observes f's talhão again, in place, with the world-side
// terms of on removed.
func decompWorld(f synthField, on map[string]bool, dates []timeT, rng *rand.Rand) {
	if on["dry"] {
		*f.sc = *f.sc.Dried()
	}
	cloud := 1.0
	if on["clear"] {
		*f.sc = *f.sc.Unclouded()
		cloud = 1e-9
	}
	o := pheno.ObsOptions{Noise: *obsNoise}
	if on["noise"] {
		o.Noise = 1e-9
	}
	if on["haze"] {
		o.ResidueProb = -1
	}
	for i, c := range observeCells(rng, f.sc, dates, len(f.cells), cloud, o) {
		copy(f.cells[i], c)
		for j := range f.cells[i] {
			if on["wetmask"] && f.sc.Wetness(dates[j]) > 0.1 {
				f.cells[i][j] = Obs{Date: c[j].Date, NDVI: nan, NDTI: nan, Red: nan, NIR: nan, SWIR1: nan, SWIR2: nan}
			}
		}
	}
}

// decompEstimator sets the research oracles for f's estimator-side terms.
func decompEstimator(f synthField, on map[string]bool) {
	oracleSoil, oraclePrior, oracleStraw = nil, nil, nil
	if on["soil"] {
		oracleSoil = soilOracles["soil"](f)
	}
	if on["straw"] {
		oracleStraw = func(_ spectral.Endmember, sow timeT) spectral.Endmember {
			r := f.sc.GroundStrawSpectrum(sow.AddDate(0, 0, -15))
			return spectral.Spectrum{Red: r.Red, NIR: r.NIR, SWIR1: r.SWIR1, SWIR2: r.SWIR2}.Endmember()
		}
		oraclePrior = func(sow timeT) (residuePrior, bool) {
			return residuePrior{ndti: f.sc.GroundStrawNDTI(sow.AddDate(0, 0, -15)), sd: 0.01, note: "oracle"}, true
		}
	}
}

// decompSplit is the within-talhão correlation of the seasons' errors and
// the error by what the window holds.
func decompSplit(r hardResult, fields []synthField) string {
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	type grp struct{ n, abs, bias float64 }
	g := map[string]*grp{}
	add := func(k string, e float64) {
		if g[k] == nil {
			g[k] = &grp{}
		}
		g[k].n++
		g[k].abs += math.Abs(e)
		g[k].bias += e
	}
	var a, b, na, nb, tm []float64
	var within, between float64
	nt := 0
	for k, f := range fields {
		var e, z []float64
		for i, s := range contract.Assessed() {
			rec := r.seasons[3*k+i]
			if math.IsNaN(rec.est) {
				continue
			}
			err := rec.est - rec.truth
			e = append(e, err)
			// The error over the half-width on the truth's side.
			h := rec.hi - rec.est
			if err > 0 {
				h = rec.est - rec.lo
			}
			z = append(z, err/math.Max(h, 0.5))
			sow, _ := f.trueSowing(s)
			add(decompWindow(f, sow), err)
			add(fmt.Sprintf("clear dates in window: %d", min(3, decompClear(f, sow))), err)
		}
		for i := range e {
			for j := i + 1; j < len(e); j++ {
				a, b = append(a, e[i]), append(b, e[j])
				na, nb = append(na, z[i]), append(nb, z[j])
			}
		}
		if len(e) == 3 {
			m := (e[0] + e[1] + e[2]) / 3
			tm = append(tm, m)
			for _, x := range e {
				within += (x - m) * (x - m)
			}
			nt++
		}
	}
	_, sm := meanSD(tm)
	between = sm * sm
	var sb strings.Builder
	fmt.Fprintf(&sb, "seasons' errors within a talhão: pair correlation %.2f (%d pairs), over their half-widths %.2f; sd of the talhão-mean error %.2f pp, within-talhão sd %.2f pp (%d talhões)\n",
		pearson(a, b), len(a), pearson(na, nb), math.Sqrt(between), math.Sqrt(within/float64(2*nt)), nt)
	h, fl, n := calibratedFlags(r.cs)
	fmt.Fprintf(&sb, "a C interval of one width holding 90 %% of true Cs: ±%.1f pp, flagging %d of %d Cs\n", h, fl, n)
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&sb, "  %-40s n %4.0f  MAE %5.2f pp  bias %+5.2f pp\n", k, g[k].n, g[k].abs/g[k].n, g[k].bias/g[k].n)
	}
	return sb.String()
}

// decompWindow names what the 30 days before sow hold: a tillage, a
// standing dry canopy (desiccated cover or weeds, a crop drying), or
// ground straw and soil only.
func decompWindow(f synthField, sow timeT) string {
	from := sow.AddDate(0, 0, -30)
	for _, tl := range f.sc.Tillage {
		if !tl.Date.Before(from) && tl.Date.Before(sow) {
			return "window: tillage"
		}
	}
	for d := from; d.Before(sow); d = d.AddDate(0, 0, 1) {
		g, st, _ := f.sc.Fractions(d)
		gs := f.sc.GroundStraw(d)
		if dr := (st - (1-g)*gs) / math.Max(1e-9, 1-gs); dr > 0.05 {
			return "window: standing dry canopy > 5 %"
		}
	}
	return "window: ground straw and soil"
}

// decompClear counts f's clear dates in the 30 days before sow.
func decompClear(f synthField, sow timeT) int {
	n := 0
	for _, o := range f.cells[0] {
		if !o.Date.Before(sow.AddDate(0, 0, -30)) && o.Date.Before(sow) && finite(o.NDTI) {
			n++
		}
	}
	return n
}

// pearson is the correlation of x and y.
func pearson(x, y []float64) float64 {
	mx, sx := meanSD(x)
	my, sy := meanSD(y)
	c := 0.0
	for i := range x {
		c += (x[i] - mx) * (y[i] - my)
	}
	return c / float64(len(x)) / (sx * sy)
}

// calibratedFlags is the half-width h of the narrowest interval of one
// width, C ± h, that holds 90 % of the true Cs of cs, and how many of the
// n Cs read it flags level-uncertain (crossing 30, 60 or 90 %): the fewest
// flags an interval calibrated to nominal can raise when it cannot tell
// one talhão's error from another's.
func calibratedFlags(cs []cRec) (h float64, flagged, n int) {
	var e []float64
	for _, c := range cs {
		if c.ok {
			e = append(e, math.Abs(c.est-c.truth))
		}
	}
	slices.Sort(e)
	if len(e) == 0 {
		return math.NaN(), 0, 0
	}
	h = e[int(math.Ceil(0.9*float64(len(e))))-1]
	for _, c := range cs {
		if c.ok && zarc.CLevel(math.Max(0, c.est-h)) != zarc.CLevel(math.Min(100, c.est+h)) {
			flagged++
		}
	}
	return h, flagged, len(e)
}
