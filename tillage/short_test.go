package tillage

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
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
	// baseline flags per threshold (index of shortDrops), talhão level.
	fBase []fieldPR
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
	sc := shortScore{fBase: make([]fieldPR, len(shortDrops))}
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
		for k, x := range shortDrops {
			sc.fBase[k].add(len(MedianNDTIDrop(st.cells, x)) > 0, len(truth) > 0)
		}
	}
	return sc
}

// shortTruth satisfies the generator's strawDrop for confusion.add (the
// short world's drops are all counted as visible).
type shortTruth struct{ phenoGen }

func (*shortTruth) strawDrop(int) float64 { return 1 }

// baselineAt returns the baseline at the lowest threshold whose false
// positive rate does not exceed fpr, and that threshold.
func (s shortScore) baselineAt(fpr float64) (fieldPR, float64) {
	for k, f := range s.fBase {
		if ratio(f.fp, f.fp+f.tn) <= fpr+1e-12 {
			return f, shortDrops[k]
		}
	}
	return s.fBase[len(s.fBase)-1], shortDrops[len(shortDrops)-1]
}

func (s shortScore) String() string {
	var sb strings.Builder
	fpr := ratio(s.fDet.fp, s.fDet.fp+s.fDet.tn)
	b, drop := s.baselineAt(fpr)
	best, bestDrop := fieldPR{}, 0.0
	for k, f := range s.fBase {
		if f.balanced() > best.balanced() {
			best, bestDrop = f, shortDrops[k]
		}
	}
	fmt.Fprintf(&sb, "Detect   : events %v\n           %v (false-positive rate %.3f)\n", s.det, s.fDet, fpr)
	fmt.Fprintf(&sb, "NDTI drop at equal false positives (drop > %.4f): %v\n", drop, b)
	fmt.Fprintf(&sb, "NDTI drop, best threshold on these talhões (drop > %.4f, optimistic): %v\n", bestDrop, best)
	fmt.Fprintf(&sb, "conventional talhões left out (no tillage inside the window with 20 days after it): %d", s.skipped)
	return sb.String()
}

// TestShortSeries runs the short-series world on the tuning seeds. The
// issue 30 target (talhão balanced accuracy ≥ 0.85, above the NDTI-drop
// baseline at the same false-positive rate) is NOT met in this world
// (0.56 / 0.61 on seeds 1 / 2; the baseline's best threshold on the same
// talhões 0.60 / 0.62): it is logged, and a regression floor below the
// measured figures is asserted.
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
		b, _ := s.baselineAt(ratio(s.fDet.fp, s.fDet.fp+s.fDet.tn))
		a := s.fDet.balanced()
		if a < 0.85 || a <= b.balanced() {
			t.Logf("seed %d: balanced accuracy %.3f, baseline at equal false positives %.3f: issue 30 target (≥ 0.85 and above it) NOT met", seed, a, b.balanced())
		}
		if a < 0.54 {
			t.Errorf("seed %d: balanced accuracy %.3f, want ≥ 0.54 (regression floor; measured 0.561 / 0.613 on seeds 1 / 2)", seed, a)
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
