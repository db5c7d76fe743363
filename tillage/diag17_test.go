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
	for i := 0; i < 2*200; i++ {
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
			t.Log(describeMiss(sc, cells, q, tr, kind, ret, len(ev) > 0))
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
	var sc *pheno.Scenario
	onScenario = func(s *pheno.Scenario) { sc = s }
	defer func() { onScenario = nil }()
	rng := rand.New(rand.NewPCG(1, 0x7a11a9e))
	p := debugParams()
	p.tune = p.tune.withDefaults()
	for i := 0; i < 2*100; i++ {
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
