package coverage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
)

// The harder harness of issue 17: the same talhões and measurement design
// as runAccuracy, in pheno's varied world (straw by residue type and age,
// three soils, per-date wetness, green by crop: pheno.SpectraVaried), none
// of whose spectra the estimators assume. Seeds below 100 are tuning
// seeds (what the calibration and the interval widths were set on); the
// held-out seeds (-hardseed, default 20271) were run once for the figures.

// seasonRec is one assessed season of the harder harness.
type seasonRec struct {
	truth, est, lo, hi float64 // percent; est NaN when the season was not read
	strawNDTI          float64 // true dry ground-straw NDTI at the sowing
	soil               string
}

// cRec is one talhão's C.
type cRec struct {
	truth, est, lo, hi float64
	ok, flagged        bool
}

// readingRec is one clear reading: true straw fraction, raw NDTI, unmixed straw.
type readingRec struct{ truth, ndti, straw float64 }

type hardResult struct {
	seasons  []seasonRec
	cs       []cRec
	sowErr   []float64
	missed   int
	readings []readingRec
}

// runHarder simulates n talhões of nCells cells in the given world and
// assesses C for 2026/2027 with detected sowing.
func runHarder(n, nCells int, seed uint64, spectra pheno.Spectra) hardResult {
	return runHarderTruth(n, nCells, seed, spectra, nil)
}

// runHarderTruth is runHarder with the truth of each talhão read from
// truth(its scenario) when truth is not nil (the same readings and
// estimates: see TestTwinBound).
func runHarderTruth(n, nCells int, seed uint64, spectra pheno.Spectra, truth func(*pheno.Scenario) *pheno.Scenario) hardResult {
	return runHarderDeclared(n, nCells, seed, spectra, truth, false)
}

// runHarderDeclared is runHarderTruth with, when declare is set, each
// talhão's crop history declared (declaredHistory) and read by
// AssessHistory: the same talhões, readings and truth as without it.
func runHarderDeclared(n, nCells int, seed uint64, spectra pheno.Spectra, truth func(*pheno.Scenario) *pheno.Scenario, declare bool) hardResult {
	return runHarderHook(n, nCells, seed, spectra, truth, declare, nil, false)
}

// runHarderHook is runHarderDeclared calling hook (when not nil) with each
// talhão before it is assessed (the research oracles set their knobs
// there), and with its true sowings declared when trueSowing is set.
func runHarderHook(n, nCells int, seed uint64, spectra pheno.Spectra, truth func(*pheno.Scenario) *pheno.Scenario, declare bool, hook func(synthField), trueSowing bool) hardResult {
	rng := rand.New(rand.NewPCG(seed, 2027))
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	var r hardResult
	for k := 0; k < n; k++ {
		crop := pheno.Soja
		if rng.Float64() < 0.2 {
			crop = pheno.Milho
		}
		f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: nCells, crop: crop, cloudScale: 1, spectra: spectra})
		var hist History
		if declare {
			hist = declaredHistory(f.sc)
		}
		if hook != nil {
			hook(f)
		}
		var sowings map[string]Declared
		if trueSowing {
			sowings = map[string]Declared{}
			for _, s := range contract.Assessed() {
				if sow, ok := f.trueSowing(s); ok {
					sowings[s.Label] = Declared{Season: s.Label, Date: sow}
				}
			}
		}
		got := AssessHistory(f.cells, contract, sowings, hist, zarc.Crop(crop), hardParams())
		if truth != nil {
			f.sc = truth(f.sc)
		}
		tsum := 0.0
		for i, s := range contract.Assessed() {
			sow, ok := f.trueSowing(s)
			if !ok {
				panic(fmt.Sprintf("field %d: no main crop sown in %s", k, s.Label))
			}
			tr := f.sc.StrawPct(sow.AddDate(0, 0, -30), sow)
			tsum += tr
			sc := got.Seasons[i]
			rec := seasonRec{truth: tr, est: math.NaN(), lo: math.NaN(), hi: math.NaN(), strawNDTI: f.sc.GroundStrawNDTI(sow), soil: f.sc.SoilKind()}
			if sc.Sowing.Date.IsZero() {
				r.missed++
			} else {
				r.sowErr = append(r.sowErr, sc.Sowing.Date.Sub(sow).Hours()/24)
			}
			if sc.OK {
				rec.est, rec.lo, rec.hi = sc.CoverPct, sc.CoverLo, sc.CoverHi
			}
			r.seasons = append(r.seasons, rec)
			r.readings = append(r.readings, seasonReadings(f, sow, hardParams())...)
		}
		r.cs = append(r.cs, cRec{truth: tsum / 3, est: got.Pct, lo: got.PctLo, hi: got.PctHi, ok: got.OK, flagged: got.LevelUncertain})
	}
	return r
}

// seasonReadings returns the clear readings of the 60 days before sow of
// every cell of f, with the true straw fraction of their date and the
// talhão-calibrated per-reading straw (UnmixReadings).
func seasonReadings(f synthField, sow timeT, p Params) []readingRec {
	fr := UnmixReadings(f.cells, p)
	var out []readingRec
	for i, cell := range f.cells {
		for j, o := range cell {
			if o.Date.Before(sow.AddDate(0, 0, -60)) || !o.Date.Before(sow) || !finite(o.NDTI) || !finite(fr[i][j].Straw) {
				continue
			}
			_, st, _ := f.sc.Fractions(o.Date)
			out = append(out, readingRec{truth: st, ndti: o.NDTI, straw: fr[i][j].Straw})
		}
	}
	return out
}

// bandStats is MAE, bias, n and interval coverage of a set of seasons.
type bandStats struct {
	n, in           int
	abs, bias, wide float64
}

func (b *bandStats) add(s seasonRec) {
	e := s.est - s.truth
	b.n++
	b.abs += math.Abs(e)
	b.bias += e
	b.wide += s.hi - s.lo
	if s.truth >= s.lo && s.truth <= s.hi {
		b.in++
	}
}

// coverage is the percentage of seasons whose interval holds the truth.
func (b bandStats) coverage() float64 { return 100 * float64(b.in) / float64(max(1, b.n)) }

func (b bandStats) String() string {
	if b.n == 0 {
		return "n 0"
	}
	return fmt.Sprintf("n %4d  MAE %5.2f pp  bias %+5.2f pp  90%% interval contains truth %5.1f %% (mean width %4.1f pp)",
		b.n, b.abs/float64(b.n), b.bias/float64(b.n), 100*float64(b.in)/float64(b.n), b.wide/float64(b.n))
}

// strawBands are the straw-spectrum bands of the tables (dry ground-straw NDTI).
var strawBands = []float64{0.15, 0.20, 0.25, 0.30}

func strawBand(v float64) string {
	lo := "<"
	for i, b := range strawBands {
		if v < b {
			if i == 0 {
				return fmt.Sprintf("NDTI < %.2f", b)
			}
			return fmt.Sprintf("NDTI %s–%.2f", lo, b)
		}
		lo = fmt.Sprintf("%.2f", b)
	}
	return fmt.Sprintf("NDTI ≥ %.2f", strawBands[len(strawBands)-1])
}

// spearman returns the rank correlation of x and y.
func spearman(x, y []float64) float64 {
	rx, ry := ranks(x), ranks(y)
	mx, _ := meanSD(rx)
	my, _ := meanSD(ry)
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && x[idx[j]] == x[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			r[idx[k]] = float64(i+j-1) / 2
		}
		i = j
	}
	return r
}

// summary holds the headline figures of a harder-harness run.
type summary struct {
	all                          bandStats
	bands, soils                 map[string]*bandStats
	sowMAE, agree, rhoStraw, rho float64
	cN, cIn, flagged, cMissing   int
}

func summarise(r hardResult) summary {
	s := summary{bands: map[string]*bandStats{}, soils: map[string]*bandStats{}}
	for _, x := range r.seasons {
		if math.IsNaN(x.est) {
			continue
		}
		s.all.add(x)
		for m, k := range map[*map[string]*bandStats]string{&s.bands: strawBand(x.strawNDTI), &s.soils: x.soil} {
			if (*m)[k] == nil {
				(*m)[k] = &bandStats{}
			}
			(*m)[k].add(x)
		}
	}
	abs := 0.0
	for _, e := range r.sowErr {
		abs += math.Abs(e)
	}
	s.sowMAE = abs / float64(len(r.sowErr))
	agree := 0
	for _, c := range r.cs {
		if !c.ok {
			s.cMissing++
			continue
		}
		s.cN++
		if zarc.CLevel(c.est) == zarc.CLevel(c.truth) {
			agree++
		}
		if c.truth >= c.lo && c.truth <= c.hi {
			s.cIn++
		}
		if c.flagged {
			s.flagged++
		}
	}
	s.agree = float64(agree) / float64(s.cN)
	var t, nd, st []float64
	for _, x := range r.readings {
		t, nd, st = append(t, x.truth), append(nd, x.ndti), append(st, x.straw)
	}
	s.rho, s.rhoStraw = spearman(t, nd), spearman(t, st)
	return s
}

func (s summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seasons read: %v\n", s.all)
	for _, m := range []map[string]*bandStats{s.bands, s.soils} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-22s %v\n", k, m[k])
		}
	}
	fmt.Fprintf(&b, "sowing MAE %.2f d\n", s.sowMAE)
	fmt.Fprintf(&b, "C: %d talhões with C (%d missing); level agreement %.1f %%; 90%% interval contains true C %.1f %%; level flagged uncertain %d\n",
		s.cN, s.cMissing, 100*s.agree, 100*float64(s.cIn)/float64(max(1, s.cN)), s.flagged)
	fmt.Fprintf(&b, "per-reading Spearman with true straw fraction: unmixed straw %.3f, raw NDTI %.3f", s.rhoStraw, s.rho)
	return b.String()
}

// TestHarderAccuracySmall runs the harder harness on a tuning seed (few
// talhões; the always-on check that it runs and reports).
func TestHarderAccuracySmall(t *testing.T) {
	n := *hardTuneN
	if testing.Short() {
		n = 8
	}
	for _, w := range harderWorlds("harder world", "reference world") {
		s := summarise(runHarderDeclared(n, 6, *hardTuneSeed, w.sp, nil, w.declare))
		t.Logf("%s, tuning seed %d, %d talhões × 6 cells:\n%v", w.name, *hardTuneSeed, n, s)
		// A loose check of the calibrated widening (calib.go): on the tuning
		// seeds it holds the truth in 88–94 % of seasons; a widening of half
		// or twice its value leaves this band.
		if cov := s.all.coverage(); n >= 40 && (cov < 80 || cov > 98) {
			t.Errorf("%s: seasons' 90 %% intervals hold the truth in %.1f %%, want 80–98 %% on a tuning seed", w.name, cov)
		}
	}
}

// TestAccuracyHarder is the held-out run of the harder harness and of
// today's scenario with the same code (make accuracy).
func TestAccuracyHarder(t *testing.T) {
	if !*accuracy {
		t.Skip("harder harness: run with -accuracy (make accuracy)")
	}
	for _, w := range harderWorlds("varied world (issue 17)", "reference world (today's scenario)") {
		s := summarise(runHarderDeclared(*hardN, 12, *hardSeed, w.sp, nil, w.declare))
		t.Logf("%s, held-out seed %d, %d talhões × 12 cells:\n%v", w.name, *hardSeed, *hardN, s)
		// Issue 30: the seasons' 90 % intervals hold the truth in 85–95 %
		// of seasons, in every world, declared or not.
		if cov := s.all.coverage(); cov < 85 || cov > 95 {
			t.Errorf("%s: seasons' 90 %% intervals hold the truth in %.1f %%, want 85–95 %%", w.name, cov)
		}
	}
}

// hardParams is testParams, or with -fixedstraw the reference straw given
// (no straw calibration, no intervals beyond sampling: the estimator
// before issue 17, for the "before" column).
func hardParams() Params {
	p := testParams()
	if *fixedStraw {
		p.StrawNDTI = 0.2414
	}
	return p
}

// harderWorld is one run of the harder harness's tables: a world, with or
// without the crop history declared.
type harderWorld struct {
	name    string
	sp      pheno.Spectra
	declare bool
}

// harderWorlds lists the varied and the reference world, each without and
// with the declared crop history (issue 30).
func harderWorlds(varied, reference string) []harderWorld {
	var out []harderWorld
	for _, w := range []harderWorld{{name: varied, sp: pheno.SpectraVaried}, {name: reference, sp: pheno.SpectraReference}} {
		out = append(out, w)
		w.name += ", crop history declared"
		w.declare = true
		out = append(out, w)
	}
	return out
}

// declaredHistory is the crop history the operator of sc declares: every
// crop it sowed — pheno's cycles but the fallow weeds, which nobody sows —
// with its sowing and its harvest or desiccation date, as crops.csv rows
// would. pheno's cover crop is "millet, brachiaria": it is declared as one
// or the other by the parity of its sowing day (not from the rng, so the
// talhões are drawn alike with and without the declaration). Nothing of
// pheno's residue law (its residue spectra, humification, decay) is passed:
// the estimator's prior is the published law of residue.go.
func declaredHistory(sc *pheno.Scenario) History {
	var h History
	for _, c := range sc.Cycles {
		p := Planting{Purpose: "grain", Start: c.Sowing, End: c.Harvest}
		switch c.Crop {
		case pheno.Soja:
			p.Crop, p.Species = "soja", "Glycine max"
		case pheno.Milho, pheno.Safrinha:
			p.Crop, p.Species = "milho", "Zea mays"
		case pheno.Cobertura:
			p.Crop, p.Species, p.Purpose = "milheto", "Pennisetum glaucum", "cover"
			if c.Sowing.YearDay()%2 == 1 {
				p.Crop, p.Species = "braquiaria", "Urochloa ruziziensis"
			}
		default:
			continue
		}
		h = append(h, p)
	}
	return h
}
