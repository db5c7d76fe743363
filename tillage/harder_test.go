package tillage

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
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

// ndtiDropRule is the plain baseline, MedianNDTIDrop.
func ndtiDropRule(cells []Cell, drop float64) []Break { return MedianNDTIDrop(cells, drop) }

// harderScore is talhaoOnly's result: events and talhões flagged, for
// Detect and the baseline, and both split by soil (talhões flagged) and by
// tillage kind (true tillages found).
type harderScore struct {
	det, base   confusion
	fDet, fBase fieldPR
	fNoMedian   fieldPR                // Detect's talhões flagged by a test other than the median-NDTI drop
	scan        baselineScan           // the baseline at every threshold (talhões flagged)
	bySoil      map[string]*[2]fieldPR // [0] Detect, [1] baseline
	byKind      map[string]*[3]int     // found by Detect, by the baseline, total
}

// talhaoOnly scores Detect and the baseline on nT talhões with tillage and
// nT without (6 interior + 3 border cells, half the negatives revolved at
// the border only).
func talhaoOnly(g *phenoGen, p Params, nT int, seed uint64, drop float64) harderScore {
	rng := rand.New(rand.NewPCG(seed, 0x7a11a9e))
	h := harderScore{bySoil: map[string]*[2]fieldPR{}, byKind: map[string]*[3]int{}, scan: newBaselineScan()}
	for i := 0; i < 2*nT; i++ {
		till := i%2 == 0
		borderOnly := !till && i%4 == 1
		cells, truth := g.talhao(rng, till, borderOnly, 6, 3)
		q := harnessParams(cells, p)
		ev := Detect(cells, q)
		d, b := eventsAsBreaks(ev), ndtiDropRule(cells, drop)
		h.fNoMedian.add(len(withoutTest(ev, TestMedianNDTI)) > 0, len(truth) > 0)
		h.det.add(g, d, truth)
		h.base.add(g, b, truth)
		h.fDet.add(len(d) > 0, len(truth) > 0)
		h.fBase.add(len(b) > 0, len(truth) > 0)
		h.scan.add(cells, len(truth) > 0)
		sk := g.last.SoilKind()
		if h.bySoil[sk] == nil {
			h.bySoil[sk] = &[2]fieldPR{}
		}
		h.bySoil[sk][0].add(len(d) > 0, len(truth) > 0)
		h.bySoil[sk][1].add(len(b) > 0, len(truth) > 0)
		_, _, hitD := matchFlags(d, truth)
		_, _, hitB := matchFlags(b, truth)
		for k, tr := range truth {
			kind := tillageKind(g.last, tr)
			if h.byKind[kind] == nil {
				h.byKind[kind] = &[3]int{}
			}
			h.byKind[kind][2]++
			if hitD[k] {
				h.byKind[kind][0]++
			}
			if hitB[k] {
				h.byKind[kind][1]++
			}
		}
	}
	return h
}

// harnessParams is p as the harnesses read a talhão with: calibrated to
// its soil unless -nocalib, without the median-NDTI drop test with
// -nomediandrop.
func harnessParams(cells []Cell, p Params) Params {
	q := p
	if !*noCalib {
		q = Calibrate(cells, p)
	}
	if oracleSoil != nil && oracleSc != nil {
		q.Soil = oracleSoil(oracleSc, q.Soil)
	}
	return q
}

// tillageKind names the operation of s on day d.
func tillageKind(s *pheno.Scenario, d time.Time) string {
	for _, x := range s.Tillage {
		if x.Date.Equal(d) {
			return x.Kind
		}
	}
	return "?"
}

func (h harderScore) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Detect   : %v\n           %v\nNDTI drop: %v\n           %v\n%s", h.det, h.fDet, h.base, h.fBase, h.scan.compare(h.fDet))
	for _, sk := range pheno.SoilKinds {
		if x := h.bySoil[sk]; x != nil {
			fmt.Fprintf(&sb, "\n  soil %-20s Detect %v\n  %-25s NDTI drop %v", sk, x[0], "", x[1])
		}
	}
	kinds := make([]string, 0, len(h.byKind))
	for k := range h.byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		x := h.byKind[k]
		fmt.Fprintf(&sb, "\n  kind %-14s tillages found: Detect %d/%d = %.3f, NDTI drop %d/%d = %.3f", k, x[0], x[2], ratio(x[0], x[2]), x[1], x[2], ratio(x[1], x[2]))
	}
	return sb.String()
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

// balanced is the balanced accuracy: the mean of recall and specificity.
func (f fieldPR) balanced() float64 {
	return (ratio(f.tp, f.tp+f.fn) + ratio(f.tn, f.tn+f.fp)) / 2
}

func (f fieldPR) String() string {
	return fmt.Sprintf("talhões flagged tilled: TP %d FP %d FN %d TN %d, precision %.3f recall %.3f balanced accuracy %.3f",
		f.tp, f.fp, f.fn, f.tn, ratio(f.tp, f.tp+f.fp), ratio(f.tp, f.tp+f.fn), f.balanced())
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
	// Independent of the other tests (its own worlds, flags only read):
	// under make test it overlaps the package's other long harnesses.
	t.Parallel()
	n := 60
	if testing.Short() {
		n = 10
	}
	g := &phenoGen{revisit: 5, spectra: pheno.SpectraVaried}
	h := talhaoOnly(g, DefaultParams(), n, 1, ndtiDrop)
	t.Logf("%s, tuning seed 1, %d+%d talhões:\n%v", g.name(), n, n, h)
	if !testing.Short() {
		// Regression floors on the tuning seed (issue 17 targets: talhão
		// precision and recall ≥ 0.90; detection beats the NDTI-drop rule),
		// and the third test must add recall (0.883 without it here).
		before := h.fNoMedian
		f := h.fDet
		t.Logf("talhões flagged without the median-NDTI drop test: %v", before)
		if p, r := ratio(f.tp, f.tp+f.fp), ratio(f.tp, f.tp+f.fn); p < 0.9 || r < 0.9 || r <= ratio(before.tp, before.tp+before.fn) {
			t.Errorf("talhões flagged precision %.3f recall %.3f (recall without the median-drop test %.3f); want ≥ 0.90 and above it", p, r, ratio(before.tp, before.tp+before.fn))
		}
		if a, b := f.balanced(), h.fBase.balanced(); a <= b {
			t.Errorf("balanced accuracy %.3f, NDTI-drop baseline %.3f: want Detect above", a, b)
		}
	}
	if *accuracy {
		for d := 0.02; d <= 0.081; d += 0.01 {
			b := talhaoOnly(g, DefaultParams(), n, 1, d).base
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
		h := talhaoOnly(g, DefaultParams(), *hardN, *hardSeed, ndtiDrop)
		t.Logf("%s, held-out seed %d, %d+%d talhões:\n%v", g.name(), *hardSeed, *hardN, *hardN, h)
	}
}

// withoutTest returns the events not found by test: on a long series,
// where the step test reads no piece, what Detect finds without that test
// when it is the median-NDTI drop (added last, each event of the other
// tests kept as found).
func withoutTest(events []Event, test string) []Event {
	var out []Event
	for _, e := range events {
		if e.Test != test {
			out = append(out, e)
		}
	}
	return out
}
