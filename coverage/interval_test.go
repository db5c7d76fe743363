package coverage

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/spectral"
	"github.com/manejo/manejo/zarc"
)

// Every season and C carry an interval around the estimate, and C's level
// is flagged uncertain exactly when its interval crosses a Tabela 1 limit
// (IN 2/2025 Tabela 1: C < 30, 30–60, 60–90, ≥ 90 %).
func TestAssessIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	flagged := 0
	for k := 0; k < 6; k++ {
		f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 6, crop: pheno.Soja, cloudScale: 1, spectra: pheno.Spectra(k % 2)})
		c := Assess(f.cells, contract, nil, zarc.Soja, Params{})
		if !c.OK {
			continue
		}
		for _, s := range c.Seasons {
			if !(s.CoverLo <= s.CoverPct && s.CoverPct <= s.CoverHi && s.CoverLo >= 0 && s.CoverHi <= 100) {
				t.Errorf("field %d %s: cover %.1f outside its interval %.1f–%.1f", k, s.Season.Label, s.CoverPct, s.CoverLo, s.CoverHi)
			}
		}
		if !(c.PctLo <= c.Pct && c.Pct <= c.PctHi) {
			t.Errorf("field %d: C %.1f outside %.1f–%.1f", k, c.Pct, c.PctLo, c.PctHi)
		}
		if want := zarc.CLevel(c.PctLo) != zarc.CLevel(c.PctHi); c.LevelUncertain != want {
			t.Errorf("field %d: C %.1f (%.1f–%.1f) LevelUncertain %v, want %v", k, c.Pct, c.PctLo, c.PctHi, c.LevelUncertain, want)
		}
		if c.LevelUncertain {
			flagged++
		}
	}
	if flagged == 0 {
		t.Error("no talhão flagged: the check is vacuous")
	}
	// With the endmembers given, no calibration: the interval is the cells' sampling error only.
	f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 6, crop: pheno.Soja, cloudScale: 1})
	c := Assess(f.cells, contract, nil, zarc.Soja, Params{StrawNDTI: 0.241})
	if c.OK && c.PctHi-c.PctLo > 10 {
		t.Errorf("given endmembers: C interval %.1f–%.1f wider than the sampling error", c.PctLo, c.PctHi)
	}
}

// UnmixReadings returns one fraction triple per reading, NaN for masked
// readings, summing to one, and the same straw the season cover reads.
func TestUnmixReadingsAligned(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 4, crop: pheno.Soja, cloudScale: 1})
	fr := UnmixReadings(f.cells, Params{})
	if len(fr) != len(f.cells) {
		t.Fatalf("%d cells, want %d", len(fr), len(f.cells))
	}
	for i, cell := range f.cells {
		if len(fr[i]) != len(cell) {
			t.Fatalf("cell %d: %d readings, want %d", i, len(fr[i]), len(cell))
		}
		for j, o := range cell {
			x := fr[i][j]
			if math.IsNaN(o.NDVI) != math.IsNaN(x.Straw) {
				t.Fatalf("cell %d reading %d: NDVI %v but straw %v", i, j, o.NDVI, x.Straw)
			}
			if !math.IsNaN(x.Straw) && math.Abs(x.Green+x.Straw+x.Soil-1) > 1e-9 {
				t.Fatalf("cell %d reading %d: fractions sum to %v", i, j, x.Green+x.Straw+x.Soil)
			}
		}
	}
}

// C's interval combines the seasons' half-widths as errors of correlation
// seasonCorr: between the independent (√Σh²/n) and the fully correlated
// (Σh/n) combinations, and exactly √(Σh² + ρ·Σ_{i≠j}hᵢhⱼ)/n.
func TestCIntervalCorrelation(t *testing.T) {
	ss := []SeasonCover{{CoverPct: 50, CoverLo: 40, CoverHi: 56}, {CoverPct: 60, CoverLo: 40, CoverHi: 64}, {CoverPct: 70, CoverLo: 65, CoverHi: 72}}
	lo, hi := cInterval(60, ss)
	dl := math.Sqrt(100+400+25+seasonCorr*2*(10*20+10*5+20*5)) / 3
	dh := math.Sqrt(36+16+4+seasonCorr*2*(6*4+6*2+4*2)) / 3
	if math.Abs(60-lo-dl) > 1e-9 || math.Abs(hi-60-dh) > 1e-9 {
		t.Errorf("C interval %.4f–%.4f, want %.4f–%.4f", lo, hi, 60-dl, 60+dh)
	}
	if indep, full := math.Sqrt(525)/3, 35.0/3; !(60-lo > indep && 60-lo < full) {
		t.Errorf("lower half-width %.3f not between the independent %.3f and fully correlated %.3f combinations", 60-lo, indep, full)
	}
}

// A talhão whose readings the reference spectra explain to within their
// noise (today's world) gets the narrow straw prior and soil term; one
// whose straw and soil are unlike the templates (a sandy neosol with
// maize straw, in the varied world) keeps the wide prior.
func TestReferenceConsistentNarrows(t *testing.T) {
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	width := func(sp pheno.Spectra, seed uint64) (float64, *calibration) {
		f := newSynthField(rand.New(rand.NewPCG(seed, 1)), synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 6, crop: pheno.Soja, cloudScale: 1, spectra: sp})
		_, cal := calibrate(f.cells, Params{})
		c := Assess(f.cells, contract, nil, zarc.Soja, Params{})
		return c.PctHi - c.PctLo, cal
	}
	wRef, cal := width(pheno.SpectraReference, 4)
	if cal.strawSD != referenceStrawSD || cal.soilSD != referenceSoilSD {
		t.Errorf("reference world: straw sd %.3f, soil sd %.3f, want the narrow %.3f, %.3f", cal.strawSD, cal.soilSD, referenceStrawSD, referenceSoilSD)
	}
	wide := 0
	for seed := uint64(1); seed <= 6; seed++ {
		w, cal := width(pheno.SpectraVaried, seed)
		if cal.strawSD == priorStrawSD && cal.soilSD == soilNDTISD {
			wide++
			if w <= wRef {
				t.Errorf("varied world seed %d: C interval %.1f pp not wider than the reference-consistent talhão's %.1f pp", seed, w, wRef)
			}
		}
	}
	if wide < 4 {
		t.Errorf("only %d of 6 varied-world talhões keep the wide prior", wide)
	}
}

// An envelope above the reference straw refutes the narrow prior of a
// talhão consistent with the reference spectra: the season's belief is the
// wide prior's; below it, the narrow prior stays.
func TestEnvelopeRefutesNarrowPrior(t *testing.T) {
	from := day("2025-07-01")
	var dates []time.Time
	var ndvi, ndti []float64
	for i := range 6 {
		dates = append(dates, from.AddDate(0, 0, 10*i))
		ndvi, ndti = append(ndvi, 0.2), append(ndti, 0.30)
	}
	to := from.AddDate(0, 0, 90)
	meanNDTI := func(f spectral.StrawFit) float64 {
		m := 0.0
		for i, w := range f.Weights {
			m += w * f.Spectra[i].Endmember().NDTI
		}
		return m
	}
	got := seasonStraw(dates, ndvi, ndti, from, to, referenceStrawSD)
	want := spectral.PriorStraw(priorStrawSD).AtLeast(0.30, envelopeSD)
	if a, b := meanNDTI(got), meanNDTI(want); math.Abs(a-b) > 1e-9 {
		t.Errorf("envelope 0.30 with the narrow prior: belief mean NDTI %.4f, want the wide prior's %.4f", a, b)
	}
	for i := range ndti {
		ndti[i] = 0.20
	}
	got = seasonStraw(dates, ndvi, ndti, from, to, referenceStrawSD)
	want = spectral.PriorStraw(referenceStrawSD).AtLeast(0.20, envelopeSD)
	if a, b := meanNDTI(got), meanNDTI(want); math.Abs(a-b) > 1e-9 {
		t.Errorf("envelope 0.20 with the narrow prior: belief mean NDTI %.4f, want the narrow prior's %.4f", a, b)
	}
}

// A talhão whose readings the reference templates explain (the check of
// TestReferenceConsistentNarrows) is read with their own NDVIs
// (spectral.New), so a few percent of weeds below the dry line are read as
// green; a talhão they do not explain keeps the dry line, where the same
// reading has no green and more straw (docs/coverage.md, "The dry line").
func TestTemplatesReadWeeds(t *testing.T) {
	read := func(sp pheno.Spectra, seed uint64) (Params, float64, float64) {
		f := newSynthField(rand.New(rand.NewPCG(seed, 1)), synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 6, crop: pheno.Soja, cloudScale: 1, spectra: sp})
		p, _ := calibrate(f.cells, Params{})
		u, ok := newUnmixer(p)
		if !ok {
			t.Fatalf("seed %d: no unmixer", seed)
		}
		ndvi, ndti := p.Mix(0.04, 0.46, 0.50) // 4 % weeds over straw and soil
		if d := u.DryNDVI(); !math.IsNaN(d) && ndvi >= d {
			t.Fatalf("seed %d: the weedy reading's NDVI %.3f is not below the dry line %.3f", seed, ndvi, d)
		}
		g, s, _ := u.Fractions(ndvi, ndti)
		return p, g, s
	}
	p, g, s := read(pheno.SpectraReference, 4)
	if !p.templates || math.Abs(g-0.04) > 1e-6 || math.Abs(s-0.46) > 1e-6 {
		t.Errorf("reference world: templates %v, green %.4f straw %.4f, want true, 0.04, 0.46", p.templates, g, s)
	}
	kept := 0
	for seed := uint64(1); seed <= 6; seed++ {
		p, g, s := read(pheno.SpectraVaried, seed)
		if p.templates {
			continue
		}
		kept++
		if g != 0 || s <= 0.46 {
			t.Errorf("varied world seed %d: green %.4f straw %.4f, want the dry line's 0 and more straw than 0.46", seed, g, s)
		}
	}
	if kept < 4 {
		t.Errorf("only %d of 6 varied-world talhões keep the dry line", kept)
	}
}

// A season read with a declared residue's own belief is widened by the
// declared scale, every other calibrated season (no declaration, the
// narrow reference prior, or the reference templates explaining a
// refused soil fit: strawDeclared then reads the reference belief) by
// the reference one; the two were calibrated apart (docs/coverage.md,
// "Intervals at nominal").
func TestWideningByBelief(t *testing.T) {
	r := &residuePrior{ndti: 0.25, sd: 0.03}
	cases := []struct {
		name string
		c    calibration
		want float64
	}{
		{"undeclared", calibration{strawSD: priorStrawSD}, intervalScale},
		{"declared", calibration{strawSD: priorStrawSD, residue: r}, declaredIntervalScale},
		{"declared, narrow reference prior", calibration{strawSD: referenceStrawSD, residue: r}, intervalScale},
		{"declared, templates explain", calibration{strawSD: priorStrawSD, residue: r, explained: true}, intervalScale},
	}
	for _, tc := range cases {
		if got := tc.c.widening(); got != tc.want {
			t.Errorf("%s: widening %.2f, want %.2f", tc.name, got, tc.want)
		}
	}
	if defaultIntervalScale == defaultDeclaredIntervalScale {
		t.Error("the two widenings are equal: the test cannot tell them apart")
	}
}
