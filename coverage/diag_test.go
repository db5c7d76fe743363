package coverage

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/spectral"
	"github.com/manejo/manejo/zarc"
)

var covdiag = flag.Bool("covdiag", false, "run the straw-cover error breakdown (diagnostics)")
var diagSeed = flag.Uint64("diagseed", 5, "seed of the -covdiag fields")

// diagSeason is one assessed season of a diagnostic field.
type diagSeason struct {
	truth    float64
	trueSow  time.Time
	detSow   time.Time // zero when not detected
	weeds    bool      // green fraction > 3 % on some day of the window
	dryStand bool      // a cover crop or fallow desiccated within 20 days before the window end
	tilled   bool      // tillage inside the window
	soilNDTI float64   // the field's true bare-soil NDTI
	greenMax float64
}

type diagField struct {
	f       synthField
	crop    zarc.Crop
	seasons []diagSeason
}

func buildDiag(t testing.TB, n, nCells int, seed uint64) []diagField {
	rng := rand.New(rand.NewPCG(seed, 2027))
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	var out []diagField
	for k := 0; k < n; k++ {
		crop := pheno.Soja
		if rng.Float64() < 0.2 {
			crop = pheno.Milho
		}
		f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: nCells, crop: crop, cloudScale: 1})
		df := diagField{f: f, crop: zarc.Crop(crop)}
		got := Assess(f.cells, contract, nil, zarc.Crop(crop), Params{})
		so := f.sc.Soil
		soilNDTI := (so.SWIR1 - so.SWIR2) / (so.SWIR1 + so.SWIR2)
		for i, s := range contract.Assessed() {
			sow, _ := f.trueSowing(s)
			from := sow.AddDate(0, 0, -30)
			ds := diagSeason{truth: f.sc.StrawPct(from, sow), trueSow: sow, detSow: got.Seasons[i].Sowing.Date, soilNDTI: soilNDTI}
			for d := from; d.Before(sow); d = d.AddDate(0, 0, 1) {
				g, _, _ := f.sc.Fractions(d)
				ds.greenMax = math.Max(ds.greenMax, g)
			}
			ds.weeds = ds.greenMax > 0.03
			for _, c := range f.sc.Cycles {
				if !c.Main && !c.Harvest.Before(from.AddDate(0, 0, -20)) && c.Harvest.Before(sow) && c.Yield > 0.3 {
					ds.dryStand = true
				}
			}
			for _, tl := range f.sc.Tillage {
				if !tl.Date.Before(from) && tl.Date.Before(sow) {
					ds.tilled = true
				}
			}
			df.seasons = append(df.seasons, ds)
		}
		out = append(out, df)
	}
	return out
}

// evalDiag scores an estimator (cover of one cell given the sowing day).
type cellFn func(cell []Obs, sow time.Time, f *diagField) (float64, bool)

var talhaoFn func(f *diagField, sow time.Time) (float64, bool)

func evalDiag(t *testing.T, name string, fields []diagField, fn cellFn, breakdown bool) {
	var agree, agreeDecl, nC, nCDecl int
	var cAbs, covAbs, covAbsDecl float64
	var nCov, nCovDecl int
	type bucket struct {
		n         int
		abs, bias float64
	}
	bk := map[string]*bucket{}
	add := func(k string, e float64) {
		b := bk[k]
		if b == nil {
			b = &bucket{}
			bk[k] = b
		}
		b.n++
		b.abs += math.Abs(e)
		b.bias += e
	}
	season := func(f *diagField, sow time.Time) (float64, bool) {
		if talhaoFn != nil {
			return talhaoFn(f, sow)
		}
		sum, n := 0.0, 0
		for _, c := range f.f.cells {
			if v, ok := fn(c, sow, f); ok {
				sum += v
				n++
			}
		}
		if n == 0 {
			return math.NaN(), false
		}
		return sum / float64(n), true
	}
	for i := range fields {
		f := &fields[i]
		var tsum, esum, dsum float64
		ok, okd := true, true
		for _, s := range f.seasons {
			tsum += s.truth
			if v, k := season(f, s.trueSow); k {
				dsum += v
				covAbsDecl += math.Abs(v - s.truth)
				nCovDecl++
				if breakdown {
					e := v - s.truth
					add("all", e)
					switch {
					case s.tilled:
						add("tillage in window", e)
					case s.dryStand:
						add("desiccated crop ≤20 d before window", e)
					case s.weeds:
						add("green weeds in window", e)
					default:
						add("plain", e)
					}
					switch {
					case s.soilNDTI < 0.045:
						add("soil NDTI < 0.045", e)
					case s.soilNDTI > 0.061:
						add("soil NDTI > 0.061", e)
					default:
						add("soil NDTI 0.045-0.061", e)
					}
					switch {
					case s.truth < 30:
						add("truth < 30", e)
					case s.truth < 60:
						add("truth 30-60", e)
					case s.truth < 90:
						add("truth 60-90", e)
					default:
						add("truth ≥ 90", e)
					}
				}
			} else {
				okd = false
			}
			if s.detSow.IsZero() {
				ok = false
				continue
			}
			if v, k := season(f, s.detSow); k {
				esum += v
				covAbs += math.Abs(v - s.truth)
				nCov++
			} else {
				ok = false
			}
		}
		tl := zarc.CLevel(tsum / 3)
		if ok {
			nC++
			cAbs += math.Abs(esum/3 - tsum/3)
			if zarc.CLevel(esum/3) == tl {
				agree++
			} else if breakdown {
				dmin := 100.0
				for _, l := range []float64{30, 60, 90} {
					dmin = math.Min(dmin, math.Abs(tsum/3-l))
				}
				switch {
				case dmin < 1:
					add("disagreement: true C < 1 pp from a limit", esum/3-tsum/3)
				case dmin < 2:
					add("disagreement: true C 1-2 pp from a limit", esum/3-tsum/3)
				case dmin < 3:
					add("disagreement: true C 2-3 pp from a limit", esum/3-tsum/3)
				default:
					add("disagreement: true C ≥ 3 pp from a limit", esum/3-tsum/3)
				}
			}
		}
		if okd {
			nCDecl++
			if zarc.CLevel(dsum/3) == tl {
				agreeDecl++
			}
		}
	}
	t.Logf("%-34s cover MAE %.2f (decl %.2f)  C MAE %.2f  level %d/%d = %.1f %% (decl %.1f %%)", name,
		covAbs/float64(nCov), covAbsDecl/float64(nCovDecl), cAbs/float64(nC), agree, nC, 100*float64(agree)/float64(nC),
		100*float64(agreeDecl)/float64(nCDecl))
	if breakdown {
		keys := make([]string, 0, len(bk))
		for k := range bk {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b := bk[k]
			t.Logf("    %-38s n %4d  MAE %5.2f  bias %+5.2f", k, b.n, b.abs/float64(b.n), b.bias/float64(b.n))
		}
	}
}

// TestCoverDiagnostics breaks the season straw-cover error down by
// situation (tillage, desiccated crop, green weeds in the window; soil
// brightness; true cover) for the old and new estimators and measures the
// ideas tried (docs/coverage.md, "Where the error comes from"). Tuning seed
// -diagseed (default 5), never the harness's. Runs with -covdiag.
func TestCoverDiagnostics(t *testing.T) {
	if !*covdiag {
		t.Skip("diagnostics: run with -covdiag")
	}
	fields := buildDiag(t, 400, 12, *diagSeed)
	perCell := func(p Params) cellFn {
		p = p.withDefaults()
		return func(c []Obs, sow time.Time, f *diagField) (float64, bool) {
			v, _, ok := cellCover(c, sow, p, nil)
			return v, ok
		}
	}
	evalDiag(t, "median NDTI (before)", fields, perCell(Params{Estimator: "median"}), true)
	evalDiag(t, "mean NDTI", fields, perCell(Params{Estimator: "mean"}), false)
	evalDiag(t, "unmix, no anchors", fields, perCell(Params{AnchorDays: -1}), false)
	evalDiag(t, "unmix, anchors 10", fields, perCell(Params{AnchorDays: 10}), false)
	evalDiag(t, "unmix, anchors 20", fields, perCell(Params{AnchorDays: 20}), false)
	evalDiag(t, "unmix, MaxNDVI 1 (no green drop)", fields, perCell(Params{MaxNDVI: 1}), false)
	evalDiag(t, "unmix, Outside 0.1", fields, perCell(Params{Outside: 0.1}), false)
	evalDiag(t, "unmix, MaxNDVI 1, anchors 20", fields, perCell(Params{MaxNDVI: 1, AnchorDays: 20}), false)
	for _, gf := range []float64{0.04, 0.06, 0.12, 0.2} {
		evalDiag(t, fmt.Sprintf("unmix, HazeGreen %.2f", gf), fields, perCell(Params{HazeGreen: gf}), false)
	}
	evalDiag(t, "unmix, default soil (no reflectances)", fields, perCell(Params{}), true)
	// The default: the talhão's soil fitted from its readings' reflectances.
	fitted := map[*diagField]Params{}
	var fitErr, defErr float64
	for i := range fields {
		f := &fields[i]
		p := Params{}.withDefaults()
		if fit, ok := fitSoil(f.f.cells, p, false); ok {
			p.Soil = fit.Soil.Endmember()
			so := f.f.sc.Soil
			tn := (so.SWIR1 - so.SWIR2) / (so.SWIR1 + so.SWIR2)
			fitErr += math.Abs(p.Soil.NDTI - tn)
			defErr += math.Abs(spectral.Soil.NDTI - tn)
		}
		fitted[f] = p
	}
	evalDiag(t, "unmix, talhão soil fit (default)", fields, func(c []Obs, sow time.Time, f *diagField) (float64, bool) {
		v, _, ok := cellCover(c, sow, fitted[f], nil)
		return v, ok
	}, true)
	t.Logf("    soil NDTI of the fit: MAE %.4f over %d talhões (default endmember: %.4f)", fitErr/float64(len(fields)), len(fields), defErr/float64(len(fields)))
	base := Params{}.withDefaults()
	evalDiag(t, "unmix, oracle soil endmember", fields, func(c []Obs, sow time.Time, f *diagField) (float64, bool) {
		p := base
		so := f.f.sc.Soil
		p.Soil = spectral.Endmember{NDVI: (so.NIR - so.Red) / (so.NIR + so.Red), NDTI: (so.SWIR1 - so.SWIR2) / (so.SWIR1 + so.SWIR2), VNIR: so.NIR + so.Red, SWIR: so.SWIR1 + so.SWIR2}
		v, _, ok := cellCover(c, sow, p, nil)
		return v, ok
	}, false)
	// Idea 3: the talhão's own soil NDTI, only where its history shows bare soil.
	for _, cfg := range []struct {
		bare    float64
		minBare int
	}{{0.10, 3}, {0.12, 2}, {0.15, 2}} {
		soil := map[*diagField]float64{}
		var absEst, absDef float64
		for i := range fields {
			f := &fields[i]
			if v, ok := fieldSoilNDTI(MedianSeries(f.f.cells), base, cfg.bare, cfg.minBare); ok {
				soil[f] = v
				absEst += math.Abs(v - f.seasons[0].soilNDTI)
				absDef += math.Abs(base.Soil.NDTI - f.seasons[0].soilNDTI)
			}
		}
		evalDiag(t, fmt.Sprintf("unmix, field soil (bare < %.2f, ≥ %d dates)", cfg.bare, cfg.minBare), fields, func(c []Obs, sow time.Time, f *diagField) (float64, bool) {
			p := base
			if v, ok := soil[f]; ok {
				p.Soil.NDTI = v
			}
			v, _, ok := cellCover(c, sow, p, nil)
			return v, ok
		}, false)
		t.Logf("    soil NDTI estimated on %d talhões: MAE %.4f (default endmember on the same talhões: %.4f)",
			len(soil), absEst/float64(len(soil)), absDef/float64(len(soil)))
	}
	talhaoFn = func(f *diagField, sow time.Time) (float64, bool) { return talhaoUnmix(f.f.cells, sow, base) }
	evalDiag(t, "unmix, per-date median over cells", fields, nil, false)
	talhaoFn = nil
	// How close are the true C to a level limit?
	var near1, near2, near3 int
	for _, f := range fields {
		tc := 0.0
		for _, s := range f.seasons {
			tc += s.truth / 3
		}
		dmin := 100.0
		for _, l := range []float64{30, 60, 90} {
			dmin = math.Min(dmin, math.Abs(tc-l))
		}
		if dmin < 1 {
			near1++
		}
		if dmin < 2 {
			near2++
		}
		if dmin < 3 {
			near3++
		}
	}
	t.Logf("true C within 1 / 2 / 3 pp of a level limit: %d / %d / %d of %d talhões", near1, near2, near3, len(fields))
}

// talhaoUnmix: per date, the median over cells of the unmixed straw
// fraction, then the time mean.
func talhaoUnmix(cells [][]Obs, sow time.Time, p Params) (float64, bool) {
	u, _ := spectral.New(p.Green, p.Straw, p.Soil)
	from := sow.AddDate(0, 0, -p.WindowDays)
	by := map[time.Time][]float64{}
	for _, c := range cells {
		for _, o := range c {
			d := zarc.Day(o.Date)
			if d.Before(from.AddDate(0, 0, -p.AnchorDays)) || !d.Before(sow.AddDate(0, 0, p.AnchorDays)) {
				continue
			}
			if !finite(o.NDVI) || !finite(o.NDTI) || o.NDVI >= p.MaxNDVI {
				continue
			}
			g, s, b := u.Fractions(o.NDVI, o.NDTI)
			if !finite(s) || g < -p.Outside || s < -p.Outside || b < -p.Outside || g > 1+p.Outside || s > 1+p.Outside || b > 1+p.Outside {
				continue
			}
			by[d] = append(by[d], s)
		}
	}
	var days, vals []float64
	inside := 0
	var ds []time.Time
	for d := range by {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].Before(ds[j]) })
	for _, d := range ds {
		v := by[d]
		sort.Float64s(v)
		days = append(days, d.Sub(from).Hours()/24)
		vals = append(vals, num.Median(v))
		if !d.Before(from) && d.Before(sow) {
			inside++
		}
	}
	if inside == 0 {
		return math.NaN(), false
	}
	return math.Max(0, math.Min(100, 100*timeMean(days, vals, p.WindowDays))), true
}

// fieldSoilNDTI estimates the talhão's own bare-soil NDTI from its history,
// only when the history shows bare soil: on the talhão median series, the
// dates whose reading unmixes (with the default soil) into less than
// bareStraw straw and less than 5 % green are the bare dates; with at least
// minBare of them, the estimate is the median NDTI of the (up to) three
// lowest. ok is false otherwise (no-till fields that are never bare keep
// the default).
func fieldSoilNDTI(med []Obs, p Params, bareStraw float64, minBare int) (float64, bool) {
	u, ok := spectral.New(p.Green, p.Straw, p.Soil)
	if !ok {
		return math.NaN(), false
	}
	var nd []float64
	for _, o := range med {
		if !finite(o.NDVI) || !finite(o.NDTI) {
			continue
		}
		g, s, b := u.Fractions(o.NDVI, o.NDTI)
		if !finite(s) || g > 0.05 || g < -p.Outside || b > 1+p.Outside || s >= bareStraw {
			continue
		}
		nd = append(nd, o.NDTI)
	}
	if len(nd) < minBare {
		return math.NaN(), false
	}
	sort.Float64s(nd)
	k := min(3, len(nd))
	return num.Median(nd[:k]), true
}

// TestCoverDiagCases lists the talhões whose level disagrees although the
// true C is ≥ 3 pp from a limit (default estimator, detected sowing).
func TestCoverDiagCases(t *testing.T) {
	if !*covdiag {
		t.Skip("diagnostics: run with -covdiag")
	}
	fields := buildDiag(t, 400, 12, *diagSeed)
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	for i := range fields {
		f := &fields[i]
		got := Assess(f.f.cells, contract, nil, f.crop, Params{})
		if !got.OK {
			continue
		}
		tc := 0.0
		for _, s := range f.seasons {
			tc += s.truth / 3
		}
		dmin := 100.0
		for _, l := range []float64{30, 60, 90} {
			dmin = math.Min(dmin, math.Abs(tc-l))
		}
		if zarc.CLevel(got.Pct) == zarc.CLevel(tc) || dmin < 3 {
			continue
		}
		t.Logf("talhão %d: C %.1f vs true %.1f", i, got.Pct, tc)
		for k, s := range f.seasons {
			sc := got.Seasons[k]
			var till []string
			for _, tl := range f.f.sc.Tillage {
				if d := tl.Date.Sub(s.trueSow).Hours() / 24; d > -60 && d < 0 {
					till = append(till, fmt.Sprintf("%s %+.0fd ret %.2f", tl.Kind, d, tl.Retention))
				}
			}
			t.Logf("   %s: cover %.1f vs %.1f, sowing %+.0f d, n %d, soil %.3f, weeds %v, dry %v, tillage %v",
				sc.Season.Label, sc.CoverPct, s.truth, sc.Sowing.Date.Sub(s.trueSow).Hours()/24, sc.NObs, s.soilNDTI, s.weeds, s.dryStand, till)
		}
	}
}
