package tillage

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The short-series harness of issue 30 (shortworld_test.go): talhões of a
// temperate winter seen for four to six and a half months by mixed sensors.
// Seeds 1 and 2 are the tuning set (TestShortSeries); the held-out seeds
// (-accuracy -shortseed N) were run once after every value was fixed.

var (
	shortSeed = flag.Uint64("shortseed", 101, "held-out seed of the short-series harness (-accuracy)")
	shortN    = flag.Int("shortn", 300, "conventional talhões (and as many no-till) of the short-series harness (-accuracy)")
)

// shortScore scores Detect and the plain baseline on the short world.
type shortScore struct {
	det     confusion
	fDet    fieldPR
	skipped int // conventional talhões with no tillage a detector can be held to
	fBase   baselineScan
}

// baselineScan is the plain baseline's talhões flagged at each threshold of
// shortDrops, to compare it with Detect at the same false-positive rate.
type baselineScan []fieldPR

func newBaselineScan() baselineScan { return make(baselineScan, len(shortDrops)) }

// add scores the baseline on one talhão at every threshold.
func (b baselineScan) add(cells []Cell, tilled bool) {
	for k, x := range shortDrops {
		b[k].add(len(MedianNDTIDrop(cells, x)) > 0, tilled)
	}
}

// at returns the baseline at the lowest threshold whose false-positive
// rate does not exceed fpr, and that threshold.
func (b baselineScan) at(fpr float64) (fieldPR, float64) {
	for k, f := range b {
		if ratio(f.fp, f.fp+f.tn) <= fpr+1e-12 {
			return f, shortDrops[k]
		}
	}
	return b[len(b)-1], shortDrops[len(shortDrops)-1]
}

// best returns the baseline at its best balanced accuracy (optimistic:
// chosen on the talhões it is scored on), and that threshold.
func (b baselineScan) best() (fieldPR, float64) {
	best, drop := fieldPR{}, 0.0
	for k, f := range b {
		if f.balanced() > best.balanced() {
			best, drop = f, shortDrops[k]
		}
	}
	return best, drop
}

// String reports the baseline at det's false-positive rate and at its best.
func (b baselineScan) compare(det fieldPR) string {
	fpr := ratio(det.fp, det.fp+det.tn)
	at, drop := b.at(fpr)
	best, bestDrop := b.best()
	return fmt.Sprintf("NDTI drop at equal false positives (drop > %.4f): %v\nNDTI drop, best threshold on these talhões (drop > %.4f, optimistic): %v", drop, at, bestDrop, best)
}

// shortDrops are the baseline thresholds scanned to match Detect's false
// positive rate (NDTI units).
var shortDrops = func() []float64 {
	var d []float64
	for x := 0.0; x <= 0.1501; x += 0.0025 {
		d = append(d, x)
	}
	return d
}()

// runShort draws n conventional and n no-till talhão-seasons and scores
// them: a talhão is positive when it holds a tillage the detector can be
// held to (shortTalhao.held), negative when never tilled; conventional
// talhões tilled only before the window or too close to its end are left
// out of the score (counted).
func runShort(p Params, n int, seed uint64) shortScore {
	rng := rand.New(rand.NewPCG(seed, 0x5407))
	var w shortWorld
	sc := shortScore{fBase: newBaselineScan()}
	for i := 0; i < 2*n; i++ {
		conv := i%2 == 0
		st := w.draw(rng, conv)
		truth := st.held()
		if conv && len(truth) == 0 {
			sc.skipped++
			continue
		}
		q := harnessParams(st.cells, p)
		d := eventsAsBreaks(Detect(st.cells, q))
		sc.det.add(&shortTruth{}, d, truth)
		sc.fDet.add(len(d) > 0, len(truth) > 0)
		sc.fBase.add(st.cells, len(truth) > 0)
	}
	return sc
}

// shortTruth satisfies the generator's strawDrop for confusion.add (the
// short world's drops are all counted as visible).
type shortTruth struct{ phenoGen }

func (*shortTruth) strawDrop(int) float64 { return 1 }

func (s shortScore) String() string {
	fpr := ratio(s.fDet.fp, s.fDet.fp+s.fDet.tn)
	return fmt.Sprintf("Detect   : events %v\n           %v (false-positive rate %.3f)\n%s\nconventional talhões left out (no tillage inside the window with 20 days after it): %d",
		s.det, s.fDet, fpr, s.fBase.compare(s.fDet), s.skipped)
}

// TestShortSeries runs the short-series world on the tuning seeds. The
// issue 30 target (talhão balanced accuracy ≥ 0.85, above the NDTI-drop
// baseline at the same false-positive rate) is NOT met in this world
// (0.787 / 0.775 on seeds 1 / 2 with the low-residue test read against
// the ground's wetting response, 0.795 / 0.733 with the level alone,
// 0.630 / 0.600 before it; the baseline at the same false-positive rate
// 0.602 / 0.588, at its best threshold on the same talhões 0.603 /
// 0.617): it is logged, and a regression floor below the measured figures
// is asserted.
func TestShortSeries(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 10
	}
	for _, seed := range []uint64{1, 2} {
		s := runShort(DefaultParams(), n, seed)
		t.Logf("short-series world, tuning seed %d, %d conventional + %d no-till talhão-seasons:\n%v", seed, n, n, s)
		if testing.Short() {
			continue
		}
		b, _ := s.fBase.at(ratio(s.fDet.fp, s.fDet.fp+s.fDet.tn))
		a := s.fDet.balanced()
		if a < 0.85 || a <= b.balanced() {
			t.Logf("seed %d: balanced accuracy %.3f, baseline at equal false positives %.3f: issue 30 target (≥ 0.85 and above it) NOT met", seed, a, b.balanced())
		}
		if a < 0.70 || a <= b.balanced() {
			t.Errorf("seed %d: balanced accuracy %.3f (baseline at equal false positives %.3f), want ≥ 0.70 and above it (regression floor; measured 0.787 / 0.775 on seeds 1 / 2)", seed, a, b.balanced())
		}
	}
}

// TestAccuracyShortSeries is the held-out run of the short-series world.
func TestAccuracyShortSeries(t *testing.T) {
	if !*accuracy {
		t.Skip("short-series harness: run with -accuracy")
	}
	s := runShort(DefaultParams(), *shortN, *shortSeed)
	t.Logf("short-series world, held-out seed %d, %d conventional + %d no-till talhão-seasons:\n%v", *shortSeed, *shortN, *shortN, s)
}
