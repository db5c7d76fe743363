package tillage

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/sim/pheno"
)

// tilldiag17 lists, on the tuning seed of the harder harness, the tilled
// talhões Detect misses, with the pooled interior series around each true
// tillage and the reason the straw-drop test refused it.
var tilldiag17 = flag.Bool("tilldiag17", false, "harder harness diagnostics on the tuning seed (missed talhões)")

func TestDiagHarderMisses(t *testing.T) {
	if !*tilldiag17 {
		t.Skip("-tilldiag17 not set")
	}
	g := &phenoGen{revisit: 5, spectra: pheno.SpectraVaried}
	var sc *pheno.Scenario
	onScenario = func(s *pheno.Scenario) { sc = s }
	defer func() { onScenario = nil }()
	rng := rand.New(rand.NewPCG(1, 0x7a11a9e))
	bySoil, byKind := map[string][2]int{}, map[string][2]int{}
	nMiss := 400
	envI("N", &nMiss)
	for i := 0; i < 2*nMiss; i++ {
		till := i%2 == 0
		borderOnly := !till && i%4 == 1
		cells, truth := g.talhao(rng, till, borderOnly, 6, 3)
		q := Calibrate(cells, DefaultParams())
		ev := Detect(cells, q)
		if !till {
			if len(ev) > 0 {
				t.Logf("FP talhão %d soil %s: %d events, first %s", i, sc.SoilKind(), len(ev), ev[0].Date.Format(time.DateOnly))
			}
			continue
		}
		_, _, hit := matchFlags(eventsAsBreaks(ev), truth)
		for k, tr := range truth {
			var kind string
			var ret float64
			for _, x := range sc.Tillage {
				if x.Date.Equal(tr) {
					kind, ret = x.Kind, x.Retention
				}
			}
			a, b := bySoil[sc.SoilKind()], byKind[kind]
			a[1]++
			b[1]++
			if hit[k] {
				a[0]++
				b[0]++
				bySoil[sc.SoilKind()], byKind[kind] = a, b
				continue
			}
			bySoil[sc.SoilKind()], byKind[kind] = a, b
			if len(ev) == 0 {
				t.Log(describeMiss(sc, cells, q, tr, kind, ret, len(ev) > 0) + mdWhy(cells, q, tr))
			}
		}
	}
	t.Logf("found/total by soil %v\nby kind %v", bySoil, byKind)
}

func describeMiss(sc *pheno.Scenario, cells []Cell, q Params, tr time.Time, kind string, ret float64, flagged bool) string {
	var interior [][]Obs
	for _, c := range cells {
		if !c.Border {
			interior = append(interior, c.Obs)
		}
	}
	pl := pool(interior)
	q.tune = q.tune.withDefaults()
	u, _ := newUnmixer(q)
	cs := prepare(pl, q, u)
	sg := newSigmas(cs, q)
	var sb strings.Builder
	fmt.Fprintf(&sb, "MISS %s soil %s (soilNDTI %.3f, fit %.3f) %s ret %.2f groundstraw %.2f→%.2f strawNDTI %.3f talhãoFlagged %v σs %.3f σr %.3f\n",
		tr.Format(time.DateOnly), sc.SoilKind(), ndti(sc.Soil), q.Soil.NDTI, kind, ret, sc.GroundStraw(tr.AddDate(0, 0, -1)), sc.GroundStraw(tr),
		sc.GroundStrawNDTI(tr), flagged, sg.soil, sg.r)
	for j, c := range cs {
		d := int(c.date.Sub(tr).Hours() / 24)
		if d < -30 || d > 60 {
			continue
		}
		var o Obs
		for _, x := range pl {
			if x.Date.Equal(c.date) {
				o = x
			}
		}
		w := ""
		if d >= 0 && j > 0 && d <= 20 {
			w = why(cs, j, q, sg.r)
			_, okS := tillageAt(cs, j, q, sg.soil, make([]float64, 0, 64), make([]float64, 0, 16))
			w = fmt.Sprintf("straw:%s soil:%v", w, okS)
		}
		fmt.Fprintf(&sb, "   %+4d ndvi %.3f ndti %.3f wet %.2f | g %.2f s %.2f b %.2f r %.2f  %s\n", d, o.NDVI, o.NDTI, sc.Wetness(c.date), c.green, c.straw, c.soil, c.strawShare(), w)
	}
	return sb.String()
}

func ndti(r pheno.Reflectance) float64 { return (r.SWIR1 - r.SWIR2) / (r.SWIR1 + r.SWIR2) }

var _ = math.NaN

// TestDiagHarderTune runs both worlds on the tuning seed with the knobs of
// debugParams (N talhões with tillage and as many without; default 200).
func TestDiagHarderTune(t *testing.T) {
	if !*tilldiag17 {
		t.Skip("-tilldiag17 not set")
	}
	n := 200
	envI("N", &n)
	for _, sp := range []pheno.Spectra{pheno.SpectraReference, pheno.SpectraVaried} {
		g := &phenoGen{revisit: 5, spectra: sp}
		h := talhaoOnly(g, debugParams(), n, 1, ndtiDrop)
		t.Logf("%v: events P %.3f R %.3f | %v", sp, h.det.precision(), h.det.recall(), h.fDet)
		if os.Getenv("SPLIT") != "" {
			t.Log(h)
		}
	}
}

// TestDiagMedianDropFP lists the median-drop test's breaks on untilled
// talhões of the tuning seed (varied world), with the crop calendar.
func TestDiagMedianDropFP(t *testing.T) {
	if !*tilldiag17 {
		t.Skip("-tilldiag17 not set")
	}
	g := &phenoGen{revisit: 5, spectra: pheno.SpectraVaried}
	if os.Getenv("REF") != "" {
		g.spectra = pheno.SpectraReference
	}
	var sc *pheno.Scenario
	onScenario = func(s *pheno.Scenario) { sc = s }
	defer func() { onScenario = nil }()
	rng := rand.New(rand.NewPCG(1, 0x7a11a9e))
	p := debugParams()
	p.tune = p.tune.withDefaults()
	for i := 0; i < 2*400; i++ {
		till := i%2 == 0
		cells, _ := g.talhao(rng, till, !till && i%4 == 1, 6, 3)
		if till {
			continue
		}
		var interior [][]Obs
		for _, c := range cells {
			if !c.Border {
				interior = append(interior, c.Obs)
			}
		}
		pl := pooled(interior)
		for _, b := range medianDropBreaks(pl, p) {
			var sb strings.Builder
			fmt.Fprintf(&sb, "FP %s soil %s z %.1f pre %.3f post %.3f σ %.3f:", b.Date.Format(time.DateOnly), sc.SoilKind(), b.MagnitudeSigma, b.PreLevel, b.PostLevel, b.Sigma)
			for _, c := range sc.Cycles {
				if dd := c.Harvest.Sub(b.Date).Hours() / 24; dd > -90 && dd < 30 {
					fmt.Fprintf(&sb, " %s harv%+.0f", c.Crop, dd)
				}
				if dd := c.Emergence.Sub(b.Date).Hours() / 24; dd > -60 && dd < 30 {
					fmt.Fprintf(&sb, " %s emer%+.0f", c.Crop, dd)
				}
			}
			fmt.Fprintf(&sb, "\n")
			for _, o := range pl {
				d := int(o.Date.Sub(b.Date).Hours() / 24)
				if d < -40 || d > 45 || math.IsNaN(o.NDVI) {
					continue
				}
				gr, st, _ := sc.Fractions(o.Date)
				fmt.Fprintf(&sb, "   %+4d ndvi %.3f ndti %.3f wet %.2f true g %.2f straw %.2f strawNDTI %.3f\n", d, o.NDVI, o.NDTI, sc.Wetness(o.Date), gr, st, sc.GroundStrawNDTI(o.Date))
			}
			t.Log(sb.String())
		}
	}
}

// mdWhy lists the median-drop test's statistics on the pooled bare, dry
// dates within −30..+45 days of tr.
func mdWhy(cells []Cell, q Params, tr time.Time) string {
	var interior [][]Obs
	for _, c := range cells {
		if !c.Border {
			interior = append(interior, c.Obs)
		}
	}
	pl := pooled(interior)
	q.tune = q.tune.withDefaults()
	t := &q.tune
	var sb strings.Builder
	var cs []clearObs
	for i, o := range pl {
		if math.IsNaN(o.NDTI) || o.NDVI >= t.mdBareNDVI {
			continue
		}
		if wetDate(pl, i, t.mdWet) {
			if d := int(o.Date.Sub(tr).Hours() / 24); d >= -30 && d <= 45 {
				fmt.Fprintf(&sb, "   wet %+d ndti %.3f\n", d, o.NDTI)
			}
			continue
		}
		cs = append(cs, clearObs{date: o.Date, value: o.NDTI, green: o.NDVI})
	}
	var all []float64
	for j := 1; j < len(cs); j++ {
		if pre, post, ok := medianDropLevels(cs, j, q); ok {
			all = append(all, pre-post)
		}
	}
	mid := num.Median(append([]float64(nil), all...))
	for i := range all {
		all[i] = math.Abs(all[i] - mid)
	}
	sd := math.Max(1.4826*num.Median(all), q.MinSigma)
	fmt.Fprintf(&sb, "   md: n %d mid %.3f sd %.3f soilNDTI %.3f\n", len(cs), mid, sd, q.Soil.NDTI)
	for j := 1; j < len(cs); j++ {
		d := int(cs[j].date.Sub(tr).Hours() / 24)
		if d < -15 || d > 30 {
			continue
		}
		pre, post, ok := medianDropLevels(cs, j, q)
		fmt.Fprintf(&sb, "   %+4d ndti %.3f ok %v pre %.3f post %.3f z %.1f rel %.2f canopy %v\n", d, cs[j].value, ok, pre, post, (pre-post-mid)/sd, (pre-post)/(pre-q.Soil.NDTI), canopyBefore(pl, cs[j].date, t))
	}
	return sb.String()
}

// TestDiagMedianDropAdded lists the events the median-drop test adds that
// match no true tillage (REF=1: reference world), on the tuning seed.
func TestDiagMedianDropAdded(t *testing.T) {
	if !*tilldiag17 {
		t.Skip("-tilldiag17 not set")
	}
	g := &phenoGen{revisit: 5, spectra: pheno.SpectraVaried}
	if os.Getenv("REF") != "" {
		g.spectra = pheno.SpectraReference
	}
	var sc *pheno.Scenario
	onScenario = func(s *pheno.Scenario) { sc = s }
	defer func() { onScenario = nil }()
	rng := rand.New(rand.NewPCG(1, 0x7a11a9e))
	n := 1000
	envI("N", &n)
	for i := 0; i < 2*n; i++ {
		till := i%2 == 0
		cells, truth := g.talhao(rng, till, !till && i%4 == 1, 6, 3)
		q := Calibrate(cells, DefaultParams())
		with := Detect(cells, q)
		without := withoutTest(with, TestMedianNDTI)
		_, fpW, _ := matchFlags(eventsAsBreaks(with), truth)
		_, fpO, _ := matchFlags(eventsAsBreaks(without), truth)
		if fpW <= fpO {
			continue
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "talhão %d soil %s till %v: +%d FP; events", i, sc.SoilKind(), till, fpW-fpO)
		for _, e := range with {
			fmt.Fprintf(&sb, " %s(z %.1f)", e.Date.Format(time.DateOnly), e.MagnitudeSigma)
		}
		fmt.Fprintf(&sb, "; without md")
		for _, e := range without {
			fmt.Fprintf(&sb, " %s", e.Date.Format(time.DateOnly))
		}
		fmt.Fprintf(&sb, "; truth")
		for _, x := range sc.Tillage {
			fmt.Fprintf(&sb, " %s %s", x.Date.Format(time.DateOnly), x.Kind)
		}
		for _, c := range sc.Cycles {
			for _, e := range with {
				if dd := c.Harvest.Sub(e.Date).Hours() / 24; dd > -90 && dd < 30 {
					fmt.Fprintf(&sb, " [%s: %s harv%+.0f]", e.Date.Format(time.DateOnly), c.Crop, dd)
				}
			}
		}
		t.Log(sb.String())
	}
}
