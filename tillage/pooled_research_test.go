//go:build research

package tillage

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The pooled series' clear share (issue 30, session 12, engineer pooled;
// docs/tillage.md "The pooled series' clear share"; measured, NOT adopted:
// share 0.15 with weight 4, fixed on the development seeds, lost to the
// product's half on the held-out US seeds). Detect's pooled
// series reads a date when at least pooledShare (0.5) of the interior
// points are clear on it. On the US-maize world part of the plain rule's
// edge lies in the dates on which fewer are (Landsat 7 SLC-off stripes,
// cloud edges across a field). TestPooledShare scores Detect at each
// share of -pooled.shares and each guard weight of -pooled.weights
// (pooledWeight: a date read from fewer than half the points enters the
// step test's σ and levels with a larger noise scale), every test reading
// the extra dates or the step test alone (-pooled.modes all,step), on the units of
// TestWindowDrop (US field-years and fields, short talhão-seasons,
// portfolio talhão-seasons), each beside the plain rule at equal false
// positives and beside Detect at the product's share:
//
//	go test -tags research -count=1 -run 'TestPooledShare$' -v ./tillage/ -timeout 1h -usgate.seeds 1,2,3
//	go test -tags research -count=1 -run 'TestPooledShare$' -v ./tillage/ -timeout 1h -usgate.seeds 501,502,503 \
//	   -winshort.seeds 106,107,108 -winpf.seeds 106,107,108 -winpf.n 12 -pooled.shares 0.5,0.15 -pooled.weights 4 -pooled.modes all   # held out, run once (spent)

func init() {
	flag.Float64Var(&pooledWeight, "pooledweight", 0, "tillage harnesses: guard weight of a date the pooled series reads from fewer than half the interior points (pooledWeight; product: 0)")
	flag.Float64Var(&stepShare, "stepshare", 0, "tillage harnesses: clear share at which the step test alone reads the pooled series (0: pooledShare's)")
}

var (
	pooledShares  = flag.String("pooled.shares", "0.5,0.25,0.15", "TestPooledShare: the pooled series' clear shares scored (the first is the product's, 0.5)")
	pooledWeights = flag.String("pooled.weights", "0,4", "TestPooledShare: the guard weights (pooledWeight) scored at each share below 0.5")
	pooledModes   = flag.String("pooled.modes", "all", "TestPooledShare: at each share below 0.5, every test reads its dates (all: pooledShare) or the step test alone (step: stepShare)")
)

// floatList parses a comma-separated list of numbers.
func floatList(t *testing.T, s string) []float64 {
	var out []float64
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x == "" {
			continue
		}
		v, err := strconv.ParseFloat(x, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// pooledUnits draws every unit of the three worlds (winUnits' worlds and
// seeds) with Detect's verdict at the current pooledShare and
// pooledWeight, the plain rule's largest firing drop taken from plains
// (the same draws in the same order: it does not depend on the share)
// or measured and appended to it, and the number of dates the step test
// reads (stepPooled: pooledShare's series, or with stepShare set, mode
// step, the series at stepShare).
func pooledUnits(t *testing.T, plains *[]float64) []winUnit {
	var out []winUnit
	add := func(u winUnit, cells []Cell, _ Params, _, _ time.Time) {
		if i := len(out); i < len(*plains) {
			u.plain = (*plains)[i]
		} else {
			u.plain = plainMaxT(cells)
			*plains = append(*plains, u.plain)
		}
		interior := interiorObs(cells)
		for _, o := range stepPooled(interior, pooled(interior)) {
			if !math.IsNaN(o.NDTI) {
				u.dates++
			}
		}
		out = append(out, u)
	}
	winShortUnits(t, add)
	winPortfolioUnits(t, add)
	winUSUnits(t, add)
	return out
}

// pooledCell is one group's score under a variant: balanced accuracy,
// TPR, FPR, the plain rule's balanced accuracy at that FPR, and against
// the product's share the positive (CT) and negative (NT) units it adds
// and drops, and the mean number of dates a unit's step test reads.
type pooledCell struct {
	ba, tpr, fpr, plain  float64
	ctAdd, ctDrop, ntAdd int
	ntDrop               int
	dates                float64
}

func (c pooledCell) String() string {
	s := fmt.Sprintf("%.3f (TPR %.3f FPR %.3f; plain %.3f, %+.3f; vs 0.5: CT +%d −%d, NT +%d −%d",
		c.ba, c.tpr, c.fpr, c.plain, c.ba-c.plain, c.ctAdd, c.ctDrop, c.ntAdd, c.ntDrop)
	if c.dates > 0 {
		s += fmt.Sprintf("; %.1f dates", c.dates)
	}
	return s + ")"
}

// pooledScore scores a group's units us against base (the same units at
// the product's share).
func pooledScore(us, base []winUnit) pooledCell {
	tpr, fpr, pb := winScore(us, func(u winUnit) bool { return u.det })
	c := pooledCell{ba: (tpr + 1 - fpr) / 2, tpr: tpr, fpr: fpr, plain: pb}
	for i, u := range us {
		c.dates += u.dates / float64(len(us))
		switch {
		case u.det && !base[i].det && u.pos:
			c.ctAdd++
		case !u.det && base[i].det && u.pos:
			c.ctDrop++
		case u.det && !base[i].det:
			c.ntAdd++
		case !u.det && base[i].det:
			c.ntDrop++
		}
	}
	return c
}

// TestPooledShare logs, per variant (share, guard weight), every world
// and seed's score beside the plain rule at equal FPR and against the
// product's share, US field-years also per field (any year), with the
// smallest gain over the plain rule and over the product over the groups
// and over the worlds' seed means.
func TestPooledShare(t *testing.T) {
	defer func(s, w, ss float64) { pooledShare, pooledWeight, stepShare = s, w, ss }(pooledShare, pooledWeight, stepShare)
	shares, weights := floatList(t, *pooledShares), floatList(t, *pooledWeights)
	modes := strings.Split(*pooledModes, ",")
	var plains []float64
	var baseGroups map[string][]winUnit
	for i, s := range shares {
		for j, w := range weights {
			for k, mode := range modes {
				if (i == 0 || s >= 0.5) && (j > 0 || k > 0) {
					continue
				}
				pooledShare, pooledWeight, stepShare = s, w, 0
				if s >= 0.5 {
					pooledWeight = 0
				}
				if mode == "step" {
					pooledShare, stepShare = 0.5, s
				}
				pooledVariant(t, fmt.Sprintf("share %g (%s), weight %g", s, mode, pooledWeight), &plains, &baseGroups)
			}
		}
	}
}

// pooledVariant scores the current pooledShare, stepShare and
// pooledWeight (TestPooledShare) against base, the product's share's
// groups (set by the first call).
func pooledVariant(t *testing.T, label string, plains *[]float64, base *map[string][]winUnit) {
	t0 := time.Now()
	groups, keys := winGroups(pooledUnits(t, plains))
	if *base == nil {
		*base = groups
	}
	baseGroups := *base
	var parts, ws []string
	loPlain, loBase := math.Inf(1), math.Inf(1)
	gain, over, fprs, n := map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
	var worlds []string
	score := func(name, world string, us, base []winUnit) {
		c, b := pooledScore(us, base), pooledScore(base, base)
		parts = append(parts, name+" "+c.String())
		loPlain, loBase = math.Min(loPlain, c.ba-c.plain), math.Min(loBase, c.ba-b.ba)
		if n[world] == 0 {
			worlds = append(worlds, world)
		}
		gain[world], over[world], fprs[world], n[world] = gain[world]+c.ba-c.plain, over[world]+c.ba-b.ba, fprs[world]+c.fpr-b.fpr, n[world]+1
	}
	for _, k := range keys {
		world := strings.Split(k, " seed ")[0]
		score(k, world, groups[k], baseGroups[k])
		if world == "us" {
			fs, _ := winFields(groups[k], func(u winUnit) bool { return u.det })
			bs, _ := winFields(baseGroups[k], func(u winUnit) bool { return u.det })
			score(k+" per field", "us per field", fs, bs)
		}
	}
	for _, wd := range worlds {
		ws = append(ws, fmt.Sprintf("%s %+.3f over plain, %+.3f over 0.5 (FPR %+.3f)", wd, gain[wd]/n[wd], over[wd]/n[wd], fprs[wd]/n[wd]))
	}
	t.Logf("%s (%.0f s): smallest gain over plain %+.3f, over 0.5 %+.3f; seeds' means %s | %s",
		label, time.Since(t0).Seconds(), loPlain, loBase, strings.Join(ws, "; "), strings.Join(parts, "; "))
}

// TestDateScale pins the guard's noise scale: 1 at half or more of the
// points and without a weight; √(1 + w·(0.5/s − 1)) below half.
func TestDateScale(t *testing.T) {
	defer func(w float64) { pooledWeight = w }(pooledWeight)
	for _, c := range []struct{ w, share, want float64 }{
		{0, 0.1, 1}, {4, 0.5, 1}, {4, 0.8, 1}, {4, 0, 1},
		{1, 0.25, math.Sqrt(2)}, {4, 0.25, math.Sqrt(5)}, {4, 0.1, math.Sqrt(17)},
	} {
		pooledWeight = c.w
		if got := dateScale(c.share); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("weight %g, share %g: scale %v, want %v", c.w, c.share, got, c.want)
		}
	}
}
