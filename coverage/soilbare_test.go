//go:build research

package coverage

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/spectral"
)

// The talhão's soil from its own barest dry readings (issue 30, tried and
// not kept: docs/coverage.md, "The soil side"). TestSoilBare measures it
// on the harder world's tuning seed through the oracleSoil knob (the
// estimate replaces the soil calibrate settled on, where the talhão's soil
// fit was refused).
var (
	soilBare     = flag.Bool("soilbare", false, "diagnostics: TestSoilBare, the soil read from the talhão's barest dry dates (tuning seed -hardtune)")
	soilBareRun  = flag.Bool("soilbarerun", false, "TestSoilBare: also run the harder harness with the estimate (declared and not)")
	soilBareNDTI = flag.String("soilbarendti", "bare", "TestSoilBare: the soil NDTI: prior (the calibrated soil's), bound (min of prior and barest − margin), bare (barest − margin)")
	soilBareGate = flag.Float64("soilbaregate", 0.08, "TestSoilBare: estimate only when the barest dates' NDTI is at most this")
	soilBareDrop = flag.Float64("soilbaredrop", 0, "TestSoilBare: estimate only when a dry date within 45 days before the barest reads at least this much higher NDTI (0: off)")
	soilBareTrue = flag.Float64("soilbaretrue", 0, "TestSoilBare: estimate only when the barest dates' true straw share is below this (an oracle gate; 0: off)")
	soilBareOrcl = flag.Bool("soilbareoracle", false, "TestSoilBare: where the estimate is made, the true soil instead (the ceiling of the gate)")
)

const (
	bareMaxNDVI = 0.25 // dry dates: talhão-median NDVI below this
	bareDates   = 3    // the barest dates averaged
	bareBand    = 0.01 // NDTI band around the barest whose brightest date is the driest
	bareMargin  = 0.01 // soil NDTI below the barest dates' ("bare", "bound")
	bareMinDry  = 10   // dry dates needed
	bareDropWin = 45.0 // days before the barest dates searched for a drop
	bareLoX     = 0.2  // soil SWIR brightness kept: bareLoX..bareHiX
	bareHiX     = 1.2
)

// barePt is one dry date: SWIR brightness, NDTI, day.
type barePt struct {
	x, n float64
	d    time.Time
}

// dryDates returns the dry, not wet dates of a talhão's medians, by
// ascending NDTI (the barest first).
func dryDates(dates []time.Time, ndvi, ndti, swir []float64, wet map[time.Time]bool) []barePt {
	var ps []barePt
	for i, d := range dates {
		if ndvi[i] < bareMaxNDVI && !wet[d] && finite(swir[i]) && finite(ndti[i]) {
			ps = append(ps, barePt{swir[i], ndti[i], d})
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].n < ps[j].n })
	return ps
}

// barestShare is the mean true straw share of the barest dates of ps.
func barestShare(ps []barePt, share func(time.Time) float64) float64 {
	m := 0.0
	for _, q := range ps[:min(bareDates, len(ps))] {
		m += share(q.d) / bareDates
	}
	return m
}

// bareSoil estimates a talhão's soil from its dry, not wet dates
// (talhão medians: dateMedians, wetDates): the barest dates (lowest NDTI)
// at the brightest SWIR of the dates within bareBand of their NDTI (rain
// darkens a surface and changes its NDTI little), and the line from the
// reference straw's point in (SWIR1 + SWIR2, SWIR1 − SWIR2) through
// theirs, met at the soil's NDTI (a straw–soil mixture lies on the line
// between the two): the soil's SWIR brightness, its VNIR scaled alike.
// straw, when not nil, is the true straw share of a date (the oracle
// gate). false when the readings do not allow it or a gate refuses.
func bareSoil(dates []time.Time, ndvi, ndti, swir []float64, wet map[time.Time]bool, prior spectral.Endmember, straw func(time.Time) float64) (spectral.Endmember, bool) {
	ps := dryDates(dates, ndvi, ndti, swir, wet)
	if len(ps) < bareMinDry {
		return prior, false
	}
	bn, first := 0.0, ps[0].d
	for _, q := range ps[:bareDates] {
		bn += q.n / bareDates
		if q.d.Before(first) {
			first = q.d
		}
	}
	if bn > *soilBareGate || (straw != nil && barestShare(ps, straw) >= *soilBareTrue) || !bareDrop(first, bn, ps) {
		return prior, false
	}
	bx := 0.0
	for _, q := range ps {
		if math.Abs(q.n-bn) <= bareBand {
			bx = math.Max(bx, q.x)
		}
	}
	n := prior.NDTI
	switch *soilBareNDTI {
	case "bound":
		n = math.Min(n, bn-bareMargin)
	case "bare":
		n = bn - bareMargin
	}
	st := spectral.Straw
	sx, sy := st.SWIR, st.SWIR*st.NDTI
	dx, dy := bx-sx, bx*bn-sy
	x := sx + (n*sx-sy)/(dy-n*dx)*dx
	if !(x > bareLoX && x < bareHiX) {
		return prior, false
	}
	k := x / spectral.Soil.SWIR
	out := prior
	out.NDTI, out.SWIR, out.VNIR = n, x, k*spectral.Soil.VNIR
	return out, true
}

// bareDrop reports whether the dry dates ps include one
// within bareDropWin days before first reading at least -soilbaredrop
// above bn (a revolving before the barest dates); true when the gate is off.
func bareDrop(first time.Time, bn float64, ps []barePt) bool {
	if *soilBareDrop <= 0 {
		return true
	}
	for _, q := range ps {
		if q.d.Before(first) && first.Sub(q.d).Hours()/24 <= bareDropWin && q.n >= bn+*soilBareDrop {
			return true
		}
	}
	return false
}

// TestSoilBare prints, by soil kind, the mean absolute error of the
// bare-reading soil's NDTI and SWIR brightness against the talhão's true
// dry soil, beside the reference soil's, and how many estimates the gate
// made on truly bare dates (true straw share < 0.2); with -soilbarerun,
// the harder harness read with it (-soilbare).
func TestSoilBare(t *testing.T) {
	if !*soilBare {
		t.Skip("diagnostics: run with -soilbare")
	}
	trueShare := func(f synthField) func(time.Time) float64 {
		return func(d time.Time) float64 { _, st, _ := f.sc.Fractions(d); return st }
	}
	rng := rand.New(rand.NewPCG(*hardTuneSeed, 2027))
	type acc struct{ en, ex, rn, rx, n, bare float64 }
	by := map[string]*acc{}
	for k := 0; k < *hardTuneN; k++ {
		_, f := harderField6(rng, pheno.SpectraVaried)
		d, v, n, sw := dateMedians(f.cells)
		wet := wetDates(d, sw)
		var gate func(time.Time) float64
		if *soilBareTrue > 0 {
			gate = trueShare(f)
		}
		e, ok := bareSoil(d, v, n, sw, wet, spectral.Soil, gate)
		if !ok {
			continue
		}
		tr, a := soilOracleSoilEnd(f), by[f.sc.SoilKind()]
		if a == nil {
			a = &acc{}
			by[f.sc.SoilKind()] = a
		}
		a.en, a.ex = a.en+math.Abs(e.NDTI-tr.NDTI), a.ex+math.Abs(e.SWIR-tr.SWIR)
		a.rn, a.rx = a.rn+math.Abs(spectral.Soil.NDTI-tr.NDTI), a.rx+math.Abs(spectral.Soil.SWIR-tr.SWIR)
		a.n++
		if barestShare(dryDates(d, v, n, sw, wet), trueShare(f)) < 0.2 {
			a.bare++
		}
	}
	for _, s := range pheno.SoilKinds {
		if a := by[s]; a != nil {
			t.Logf("%-20s estimates %3.0f (%3.0f on truly bare dates)  |ΔNDTI| %.3f  |ΔSWIR| %.3f  (reference soil %.3f, %.3f)", s, a.n, a.bare, a.en/a.n, a.ex/a.n, a.rn/a.n, a.rx/a.n)
		}
	}
	if !*soilBareRun {
		return
	}
	defer func() { oracleSoil = nil }()
	for _, declare := range []bool{false, true} {
		r := runHarderHook(*hardTuneN, 6, *hardTuneSeed, pheno.SpectraVaried, nil, declare, func(f synthField) {
			d, v, n, sw := dateMedians(f.cells)
			wet := wetDates(d, sw)
			var gate func(time.Time) float64
			if *soilBareTrue > 0 {
				gate = trueShare(f)
			}
			oracleSoil = func(e spectral.Endmember, fitted bool) spectral.Endmember {
				if fitted {
					return e
				}
				out, ok := bareSoil(d, v, n, sw, wet, e, gate)
				if ok && *soilBareOrcl {
					return soilOracleSoilEnd(f)
				}
				return out
			}
		}, false)
		t.Logf("%s, declared %v:\n%v", soilBareConfig(), declare, summarise(r))
	}
}

func soilBareConfig() string {
	return fmt.Sprintf("bare soil (ndti %s, gate %.3f, drop %.3f, true gate %.2f, oracle %v)", *soilBareNDTI, *soilBareGate, *soilBareDrop, *soilBareTrue, *soilBareOrcl)
}
