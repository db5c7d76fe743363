package tillage

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/manejo/manejo/sim/pheno"
)

// The harder tillage harness of issue 17: talhões of pheno's varied world
// (straw by residue type and age, three soils, wet dates, green by crop),
// scored with Detect and with the plain baseline a real-data check found
// separating tilled fields better: a persistent drop of the talhão's
// median NDTI (ndtiDropRule).

var (
	hardSeed = flag.Uint64("hardseed", 20272, "held-out seed of the harder tillage harness (-accuracy)")
	hardN    = flag.Int("hardn", 300, "talhões with tillage (and as many without) of the held-out harder harness")
	noCalib  = flag.Bool("nocalib", false, "harder harness: Detect with the reference soil (no Calibrate), the detector before issue 17")
)

// ndtiDrop is the baseline's drop threshold (NDTI units), set on the
// tuning seed (the best talhão F1 of 0.02–0.08 by 0.01).
const ndtiDrop = 0.08

// ndtiDropRule is the plain baseline: the talhão median NDTI and NDVI of
// the interior cells per date; a break between two clear dates when the
// median NDTI of the next three clear dates is below the median of the
// previous three by more than ndtiDrop, both with median NDVI below 0.3
// (bare of green: a harvest or a senescence also lowers NDTI), the
// previous three within 30 days. Breaks closer than 30 days to the last
// one are the same event.
func ndtiDropRule(cells []Cell, drop float64) []Break {
	by, byV := map[time.Time][]float64{}, map[time.Time][]float64{}
	for _, c := range cells {
		if c.Border {
			continue
		}
		for _, o := range c.Obs {
			if !math.IsNaN(o.NDTI) && !math.IsNaN(o.NDVI) {
				by[o.Date] = append(by[o.Date], o.NDTI)
				byV[o.Date] = append(byV[o.Date], o.NDVI)
			}
		}
	}
	var dates []time.Time
	for d := range by {
		dates = append(dates, d)
	}
	sort.Slice(dates, func(i, j int) bool { return dates[i].Before(dates[j]) })
	v, nv := make([]float64, len(dates)), make([]float64, len(dates))
	for i, d := range dates {
		v[i], nv[i] = median(append([]float64(nil), by[d]...)), median(append([]float64(nil), byV[d]...))
	}
	var out []Break
	for j := 3; j+3 <= len(v); j++ {
		if dates[j-1].Sub(dates[j-3]) > 30*24*time.Hour {
			continue
		}
		pre := median(append([]float64(nil), v[j-3:j]...))
		post := median(append([]float64(nil), v[j:j+3]...))
		if pre-post <= drop || median(append([]float64(nil), nv[j-3:j]...)) >= 0.3 || median(append([]float64(nil), nv[j:j+3]...)) >= 0.3 {
			continue
		}
		if n := len(out); n > 0 && dates[j].Sub(out[n-1].After) < 30*24*time.Hour {
			continue
		}
		out = append(out, Break{Date: dates[j], Before: dates[j-1], After: dates[j]})
	}
	return out
}

// talhaoOnly scores Detect and the baseline on nT talhões with tillage and
// nT without (6 interior + 3 border cells, half the negatives revolved at
// the border only).
func talhaoOnly(g generator, p Params, nT int, seed uint64, drop float64) (det, base confusion, fDet, fBase fieldPR) {
	rng := rand.New(rand.NewPCG(seed, 0x7a11a9e))
	for i := 0; i < 2*nT; i++ {
		till := i%2 == 0
		borderOnly := !till && i%4 == 1
		cells, truth := g.talhao(rng, till, borderOnly, 6, 3)
		q := p
		if !*noCalib {
			q = Calibrate(cells, p)
		}
		d, b := eventsAsBreaks(Detect(cells, q)), ndtiDropRule(cells, drop)
		det.add(g, d, truth)
		base.add(g, b, truth)
		fDet.add(len(d) > 0, len(truth) > 0)
		fBase.add(len(b) > 0, len(truth) > 0)
	}
	return det, base, fDet, fBase
}

// fieldPR scores talhões as tilled or not (any event in the history): how
// a field labelled conventional-till or no-till is checked.
type fieldPR struct{ tp, fp, fn, tn int }

func (f *fieldPR) add(flagged, tilled bool) {
	switch {
	case flagged && tilled:
		f.tp++
	case flagged:
		f.fp++
	case tilled:
		f.fn++
	default:
		f.tn++
	}
}

func (f fieldPR) String() string {
	return fmt.Sprintf("talhões flagged tilled: TP %d FP %d FN %d TN %d, precision %.3f recall %.3f balanced accuracy %.3f",
		f.tp, f.fp, f.fn, f.tn, ratio(f.tp, f.tp+f.fp), ratio(f.tp, f.tp+f.fn), (ratio(f.tp, f.tp+f.fn)+ratio(f.tn, f.tn+f.fp))/2)
}

// fieldPR is talhão-level precision and recall: a talhão is flagged when
// it has any detection, positive when it has any true tillage.
func (c confusion) f1() float64 {
	p, r := c.precision(), c.recall()
	return 2 * p * r / math.Max(1e-9, p+r)
}

// TestHarderTillageSmall runs the harder world on the tuning seed with a
// few talhões, and the baseline's threshold scan.
func TestHarderTillageSmall(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 10
	}
	g := &phenoGen{revisit: 5, spectra: pheno.SpectraVaried}
	det, base, fd, fb := talhaoOnly(g, DefaultParams(), n, 1, ndtiDrop)
	t.Logf("%s, tuning seed 1, %d+%d talhões:\nDetect   : %v\n           %v\nNDTI drop: %v\n           %v", g.name(), n, n, det, fd, base, fb)
	if *accuracy {
		for d := 0.02; d <= 0.081; d += 0.01 {
			_, b, _, _ := talhaoOnly(g, DefaultParams(), n, 1, d)
			t.Logf("baseline drop %.2f: precision %.3f recall %.3f F1 %.3f", d, b.precision(), b.recall(), b.f1())
		}
	}
}

// TestAccuracyHarderTillage is the held-out run (make accuracy): both worlds.
func TestAccuracyHarderTillage(t *testing.T) {
	if !*accuracy {
		t.Skip("harder harness: run with -accuracy (make accuracy)")
	}
	for _, sp := range []pheno.Spectra{pheno.SpectraReference, pheno.SpectraVaried} {
		g := &phenoGen{revisit: 5, spectra: sp}
		det, base, fd, fb := talhaoOnly(g, DefaultParams(), *hardN, *hardSeed, ndtiDrop)
		t.Logf("%s, held-out seed %d, %d+%d talhões:\nDetect   : %v\n           %v\nNDTI drop: %v\n           %v", g.name(), *hardSeed, *hardN, *hardN, det, fd, base, fb)
	}
}
