//go:build research

package tillage

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/internal/usworld"
)

// A window-level drop test, measured and NOT adopted (issue 30, session
// 11, engineer windowdrop; docs/tillage.md "A window-level drop test").
// Run beside Detect (a union: a unit is flagged when Detect or the window
// rule flags it), on the US-maize world (field-year and per field), the
// short world and the portfolio world, each beside the plain rule at equal
// false positives:
//
//	go test -tags research -count=1 -run TestWindowDrop -v ./tillage/ -timeout 1h -usgate.seeds 1,2,3
//	go test -tags research -count=1 -run TestWindowFeatures -v ./tillage/ -timeout 1h -winfeatures w.csv -usgate.seeds 1,2,3

// The window test (issue 30): the persistent drop of a short piece's
// corrected median NDTI between its first and its last dates. A
// conventional field's window drop is often split over passes months
// apart (a fall chisel or disk pass, a spring field cultivator): each
// single step is a fraction of the drop and no split of the step test
// stands out of the date-to-date noise, while the window as a whole
// drops by both. The drop is judged against the noise the window itself
// gives: the date-to-date scatter of the corrected series (the standard
// error of the two levels), the talhão's points (the share whose own
// drop over the same dates agrees), and, with a portfolio, the other
// talhões' drops over the same dates (a tillage is a minority's; the
// region's residue weathering, its thaw and its wet spring are
// everyone's).

// Thresholds of the window test.
const (
	// winMinDates and winMaxDates: each level holds at least and at most
	// this many dates (the early level: the piece's bare dates within the
	// edge of its first one; the late level: within the edge of its
	// last one).
	winMinDates = 2
	winMaxDates = 16
)

// windowDrop is the window test's measure of one short piece.
type windowDrop struct {
	pre, post, se, sigma float64
	npre, npost          int
	// lastPre and firstPost bracket the drop: the last date of the early
	// level and the first of the late one.
	first, lastPre, firstPost, last time.Time
	// rel is the drop as a share of the way from the early level to the
	// soil's NDTI.
	rel     float64
	sensors []string
	// agree is the share of the interior points, among the nPoints read
	// on both levels' dates, whose own drop over the same dates (each
	// date corrected as the pooled series is) is above half the talhão's.
	agree   float64
	nPoints int
	// peerZ is the talhão's drop against the other talhões' over the
	// same dates (robust z: their median and the spread of those at or
	// below it, floored at se); peerOK false when the portfolio cannot
	// judge it.
	peerZ  float64
	peerOK bool
	// wet reports whether the late level reads as the surface wetter than
	// the early one (stepWet's ratios).
	wet bool
	// canopy reports a canopy in the pooled series in the mdCanopyDays
	// before the late level (canopyBefore).
	canopy bool
}

// windowIn measures the window drop of one short piece, its levels
// reaching edgeDays from its ends, false when it holds too few bare
// dates for two separate levels.
func windowIn(seg []pooledObs, interior [][]Obs, p Params, edgeDays float64) (windowDrop, bool) {
	s := stepSeries(seg, p)
	n := len(s)
	if n < 2*winMinDates+1 {
		return windowDrop{}, false
	}
	edge := time.Duration(edgeDays) * 24 * time.Hour
	a := 0
	for a < n && a < winMaxDates && s[a].date.Sub(s[0].date) <= edge {
		a++
	}
	b := n
	for b > 0 && n-b < winMaxDates && s[n-1].date.Sub(s[b-1].date) <= edge {
		b--
	}
	if a < winMinDates || n-b < winMinDates || b < a {
		return windowDrop{}, false
	}
	sigma := stepSigma(s, p.MinSigma)
	vals := func(lo, hi int) []float64 {
		var v []float64
		for i := lo; i < hi; i++ {
			v = append(v, s[i].ndti)
		}
		return v
	}
	ones := make([]float64, winMaxDates)
	for i := range ones {
		ones[i] = 1
	}
	w := windowDrop{npre: a, npost: n - b, sigma: sigma, first: s[0].date, lastPre: s[a-1].date, firstPost: s[b].date, last: s[n-1].date}
	var sa, sb float64
	w.pre, sa = level(vals(0, a), ones[:a], sigma, 3, nil)
	w.post, sb = level(vals(b, n), ones[:n-b], sigma, 3, nil)
	w.se = math.Hypot(sa, sb)
	w.rel = (w.pre - w.post) / (w.pre - p.Soil.NDTI)
	for i := 0; i < n; i++ {
		if i < a || i >= b {
			w.sensors = append(w.sensors, s[i].sensor)
		}
	}
	sort.Strings(w.sensors)
	w.sensors = slices.Compact(w.sensors)
	w.agree, w.nPoints = pointsAgree(s, a, b, seg, interior, (w.pre-w.post)/2)
	w.peerZ, w.peerOK = p.portfolio.windowPeers(w)
	w.wet = windowWet(s, a, b)
	w.canopy = canopyBefore(seg, w.firstPost, &p.tune)
	return w, true
}

// windowWet reports whether the late level (s[b:]) reads as the surface
// wetter than the early one (s[:a]): stepWet on the two levels' dates.
func windowWet(s []stepObs, a, b int) bool {
	two := append(s[:a:a], s[b:]...)
	return stepWet(two, a, stepLevels{npre: a, npost: len(s) - b})
}

// pointsAgree returns the share of the interior points read on at least
// one date of each level whose own drop (median NDTI over the early
// dates s[:a] minus over the late dates s[b:], each reading corrected
// by its date's correction of the pooled series) exceeds half, and how
// many points were read so.
func pointsAgree(s []stepObs, a, b int, seg []pooledObs, interior [][]Obs, half float64) (float64, int) {
	corr := map[time.Time]float64{}
	raw := map[time.Time]float64{}
	for _, o := range seg {
		raw[o.Date] = o.NDTI
	}
	side := map[time.Time]int{}
	for i, o := range s {
		corr[o.date] = raw[o.date] - o.ndti
		switch {
		case i < a:
			side[o.date] = 1
		case i >= b:
			side[o.date] = 2
		}
	}
	var agree, read int
	var e, l []float64
	for _, obs := range interior {
		e, l = e[:0], l[:0]
		for _, o := range obs {
			if math.IsNaN(o.NDTI) {
				continue
			}
			switch side[o.Date] {
			case 1:
				e = append(e, o.NDTI-corr[o.Date])
			case 2:
				l = append(l, o.NDTI-corr[o.Date])
			}
		}
		if len(e) == 0 || len(l) == 0 {
			continue
		}
		read++
		if num.Median(e)-num.Median(l) > half {
			agree++
		}
	}
	if read == 0 {
		return 0, 0
	}
	return float64(agree) / float64(read), read
}

// windowPeers returns where the talhão's window drop stands among the
// other talhões' over the same dates (their corrected series: early
// level over [w.first, w.lastPre], late over [w.firstPost, w.last], at
// least winMinDates each): (drop − median)/spread, the spread 1.4826 ×
// the median deviation of the drops at or below the median (the others
// tilled lie above it), floored at w.se; false without a portfolio or
// with fewer than portfolioMinPeers others measured.
func (o *Portfolio) windowPeers(w windowDrop) (float64, bool) {
	if o == nil || o.region == nil {
		return 0, false
	}
	var drops []float64
	self := math.NaN()
	for g, m := range o.region.ms {
		var e, l []float64
		for i, d := range m.dates {
			switch {
			case !d.Before(w.first) && !d.After(w.lastPre):
				e = append(e, o.region.ys[g][i])
			case !d.Before(w.firstPost) && !d.After(w.last):
				l = append(l, o.region.ys[g][i])
			}
		}
		if len(e) < winMinDates || len(l) < winMinDates {
			continue
		}
		d := num.Median(e) - num.Median(l)
		if g == o.self {
			self = d
			continue
		}
		drops = append(drops, d)
	}
	if len(drops) < portfolioMinPeers || math.IsNaN(self) {
		return 0, false
	}
	med := num.Median(drops)
	var low []float64
	for _, x := range drops {
		if x <= med {
			low = append(low, med-x)
		}
	}
	spread := math.Max(1.4826*num.Median(low), w.se)
	return (self - med) / spread, true
}

var (
	winFeatures = flag.String("winfeatures", "", "research: write the window test's measures on the US world (-usgate.seeds), the short and the portfolio worlds (-winshort.seeds, -winpf.seeds) to this CSV")
	winShort    = flag.String("winshort.seeds", "1,2", "short-world seeds of TestWindowDrop / TestWindowFeatures (tuning: 1,2; held out 103,104,105)")
	winPF       = flag.String("winpf.seeds", "1,2", "portfolio-world seeds of TestWindowDrop / TestWindowFeatures (tuning: 1,2)")
	winPFN      = flag.Int("winpf.n", 4, "portfolios per portfolio-world seed")
)

func init() {
	flag.Float64Var(&pooledShare, "pooledshare", 0.5, "tillage harnesses: share of the interior points clear on a date for the pooled series to read it (product: 0.5)")
}

// winEdges are the level edges (days) the harness measures.
var winEdges = []float64{20, 30, 45, 60}

// winUnit is one scored unit (US field-year, short talhão-season,
// portfolio talhão-season): its label, Detect's verdict, the plain rule's
// largest firing drop, the window measure at each edge of winEdges, and
// (US) its field and noise-free truth.
type winUnit struct {
	world        string
	seed         uint64
	field        string
	pos, det     bool
	plain        float64
	w            []windowDrop
	ok           []bool
	truth, pass1 float64
	// step and twoStep: the step test's largest drop before its
	// threshold and guards (StrongestStep's levels), and the sum of the
	// two largest drops of splits more than stepDays apart (twoSteps).
	step, twoStep float64
	// half3 and any3: the largest drop of three-date medians (the plain
	// rule's statistic) over the dates bare of green (median NDVI below
	// 0.3) on which at least half the interior points are clear (the
	// detector's pooled series), and on which any point is (the plain
	// rule's dates).
	half3, any3 float64
	// noise and guarded (union_research_test.go): the date-to-date noise
	// of the plain rule's series (plainNoise), and its largest firing
	// drop past Detect's canopy and wetting guards (plainGuardedMax).
	noise, guarded float64
	// dates (pooled_research_test.go): the dates the step test reads
	// (stepPooled; in TestPooledShare's mode step, those at stepShare).
	dates float64
}

// winRule is a candidate window rule: the edge, z > k (date-to-date
// noise), rel ≥ rel (share of the way to the soil's NDTI), and with a
// portfolio peer z > peer; never on a wet late level or after a canopy.
type winRule struct {
	edge, k, rel, peer float64
}

func (r winRule) String() string {
	return fmt.Sprintf("edge %g d, z > %g, rel ≥ %g, peers z > %g", r.edge, r.k, r.rel, r.peer)
}

func (r winRule) flags(u winUnit) bool {
	i := slices.Index(winEdges, r.edge)
	w := u.w[i]
	if !u.ok[i] || w.wet || w.canopy || !((w.pre-w.post)/w.se > r.k) || !(w.rel >= r.rel) {
		return false
	}
	return !w.peerOK || w.peerZ > r.peer
}

// winRules: the rule written from the detector's own constants before
// any figure (PreWindowDays, stepK, mdRel, stepPeerK), and the best of a
// grid on the US world's development seeds 1–3 (edges 20–45, z 2–6, rel
// 0–0.5, peers 2–4: mean field-year gain over the plain rule at equal
// false positives).
var winRules = []winRule{{30, stepK, 0.4, stepPeerK}, {20, 3, 0.5, 2}}

func seedList(t *testing.T, s string) []uint64 {
	var out []uint64
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x == "" {
			continue
		}
		v, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// winUnits draws and measures every unit of the three worlds.
func winUnits(t *testing.T) []winUnit {
	var out []winUnit
	add := func(u winUnit, cells []Cell, p Params, lo, hi time.Time) {
		u.plain = plainMaxT(cells)
		u.step, u.twoStep = twoSteps(cells, p, lo, hi)
		u.half3, u.any3 = threeDateDrop(cells, true), threeDateDrop(cells, false)
		u.noise, u.guarded = plainNoise(cells), plainGuardedMax(cells)
		for _, e := range winEdges {
			w, ok := bestWindow(cells, p, lo, hi, e)
			u.w, u.ok = append(u.w, w), append(u.ok, ok)
		}
		out = append(out, u)
	}
	winShortUnits(t, add)
	winPortfolioUnits(t, add)
	winUSUnits(t, add)
	return out
}

// winAdd measures one unit on its cells and keeps it (winUnits).
type winAdd func(u winUnit, cells []Cell, p Params, lo, hi time.Time)

// winShortUnits adds the short world's talhão-seasons.
func winShortUnits(t *testing.T, add winAdd) { shortUnits(seedList(t, *winShort), add) }

// shortUnits adds the short world's talhão-seasons of seeds, *shortN
// conventional and as many no-till each, the conventional ones with no
// tillage held left out.
func shortUnits(seeds []uint64, add winAdd) {
	for _, seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 0x5407))
		var w shortWorld
		for i := 0; i < 2*(*shortN); i++ {
			conv := i%2 == 0
			st := w.draw(rng, conv)
			truth := st.held()
			if conv && len(truth) == 0 {
				continue
			}
			q := harnessParams(st.cells, DefaultParams())
			add(winUnit{world: "short", seed: seed, field: fmt.Sprint(i), pos: len(truth) > 0, det: len(Detect(st.cells, q)) > 0}, st.cells, q, time.Time{}, time.Time{})
		}
	}
}

// winPortfolioUnits adds the portfolio world's talhão-seasons, each
// talhão read with its portfolio.
func winPortfolioUnits(t *testing.T, add winAdd) {
	for _, seed := range seedList(t, *winPF) {
		rng := rand.New(rand.NewPCG(seed, 0x9f07))
		for k := range *winPFN {
			fields := pfWorld.drawPortfolio(rng)
			ms := make([]Medians, len(fields))
			for i := range fields {
				ms[i] = NewMedians(fields[i].cells, DefaultParams())
			}
			pfs := NewPortfolios(ms)
			for i, pf := range fields {
				q := harnessParams(pf.cells, DefaultParams()).WithPortfolio(&pfs[i])
				ev := Detect(pf.cells, q)
				held := pf.held()
				for s, win := range pf.windows {
					truth := false
					for _, d := range held {
						truth = truth || (d.After(win[0]) && !d.After(win[1]))
					}
					if pf.conventional && !truth {
						continue
					}
					det := false
					for _, e := range ev {
						det = det || (!e.Date.Before(win[0]) && !e.Date.After(win[1]))
					}
					add(winUnit{world: "portfolio", seed: seed, field: fmt.Sprintf("%d/%d", k, i), pos: truth, det: det}, pf.season(s), q, win[0], win[1])
				}
			}
		}
	}
}

// winUSUnits adds the US world's field-years, verdicts as usVerdicts
// gives them.
func winUSUnits(t *testing.T, add winAdd) {
	for _, seed := range usGateSeedList(t) {
		w := usworld.Generate(usworld.Config{Seed: seed, Artifacts: usworld.AllArtifacts()})
		var fys []usworld.FieldYear
		var ids []string
		for _, y := range w.Config.Years {
			for _, fl := range w.Fields {
				fy, _ := fl.Year(y)
				fys, ids = append(fys, fy), append(ids, fl.ID)
			}
		}
		for k, v := range usVerdicts(w, 0) {
			fy := fys[k]
			u := winUnit{world: "us", seed: seed, field: ids[k], pos: v.ct, det: v.flagged, truth: fy.WindowDrop, pass1: -1}
			for _, ps := range fy.Passes {
				if ps.Date.After(fy.Start) && !ps.Date.After(fy.End) {
					u.pass1 = ps.Date.Sub(fy.Start).Hours() / 24
					break
				}
			}
			add(u, v.cells, v.p, time.Time{}, time.Time{})
		}
	}
}

// winScore is a unit set's TPR and FPR under flag, and the plain rule's
// balanced accuracy at the lowest drop whose FPR does not exceed it.
func winScore(us []winUnit, flag func(winUnit) bool) (tpr, fpr, plainBA float64) {
	var tp, p, fp, n int
	var nt []float64
	for _, u := range us {
		f := flag(u)
		if u.pos {
			p++
			if f {
				tp++
			}
		} else {
			n++
			nt = append(nt, u.plain)
			if f {
				fp++
			}
		}
	}
	tpr, fpr = float64(tp)/float64(p), float64(fp)/float64(n)
	thr := testkit.ThresholdAtFP(nt, fp)
	var ptp, pfp int
	for _, u := range us {
		if u.plain > thr {
			if u.pos {
				ptp++
			} else {
				pfp++
			}
		}
	}
	return tpr, fpr, (float64(ptp)/float64(p) + 1 - float64(pfp)/float64(n)) / 2
}

// winFields folds US field-years into fields: flagged in any year, the
// plain rule's largest drop over the years.
func winFields(us []winUnit, flag func(winUnit) bool) ([]winUnit, func(winUnit) bool) {
	by := map[string]*winUnit{}
	var order []string
	for _, u := range us {
		f := by[u.field]
		if f == nil {
			f = &winUnit{field: u.field, pos: u.pos, plain: math.Inf(-1)}
			by[u.field] = f
			order = append(order, u.field)
		}
		f.det = f.det || flag(u)
		f.plain = math.Max(f.plain, u.plain)
	}
	out := make([]winUnit, len(order))
	for i, k := range order {
		out[i] = *by[k]
	}
	return out, func(u winUnit) bool { return u.det }
}

// winGroups groups units by world and seed ("us seed 1"), with the
// groups' keys in the order of their first unit.
func winGroups(units []winUnit) (map[string][]winUnit, []string) {
	groups := map[string][]winUnit{}
	var keys []string
	for _, u := range units {
		k := fmt.Sprintf("%s seed %d", u.world, u.seed)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], u)
	}
	return groups, keys
}

// TestWindowDrop logs, per world and seed, Detect alone and Detect with
// each rule of winRules, each beside the plain rule at equal false
// positives (field-year and per field, any year, on the US world).
func TestWindowDrop(t *testing.T) {
	groups, keys := winGroups(winUnits(t))
	flags := []func(winUnit) bool{func(u winUnit) bool { return u.det }}
	names := []string{"Detect"}
	for _, r := range winRules {
		flags = append(flags, func(u winUnit) bool { return u.det || r.flags(u) })
		names = append(names, "Detect ∪ window ("+r.String()+")")
	}
	for _, k := range keys {
		t.Log(winAUCs(k, groups[k]))
		for i, f := range flags {
			tpr, fpr, pb := winScore(groups[k], f)
			line := fmt.Sprintf("%s, %s: BA %.3f (TPR %.3f, FPR %.3f), plain at equal FPR %.3f", k, names[i], (tpr+1-fpr)/2, tpr, fpr, pb)
			if strings.HasPrefix(k, "us") {
				fs, ff := winFields(groups[k], f)
				tpr, fpr, pb := winScore(fs, ff)
				line += fmt.Sprintf("; per field %.3f (TPR %.3f, FPR %.3f), plain %.3f", (tpr+1-fpr)/2, tpr, fpr, pb)
				var miss, caught, ntAdd int
				for _, u := range groups[k] {
					if i > 0 && !u.det && flags[i](u) && !u.pos {
						ntAdd++
					}
					if u.pos && !u.det && u.truth >= 0.03 {
						miss++
						if flags[i](u) {
							caught++
						}
					}
				}
				if i > 0 {
					line += fmt.Sprintf("; CT field-years Detect misses with a noise-free window drop ≥ 0.03: %d caught of %d, NT field-years added %d", caught, miss, ntAdd)
				}
			}
			t.Log(line)
		}
	}
}

// winAUCs reports, at each edge, how well the window measures separate
// the group's positives from its negatives (AUC of the drop, its z, the
// share of points agreeing and the peer z, a unit without a measure ranked lowest) beside the plain rule's
// largest firing drop, and the negatives' median window drop.
func winAUCs(k string, us []winUnit) string {
	auc := func(score func(winUnit) float64) float64 {
		var pos, neg []float64
		for _, u := range us {
			if u.pos {
				pos = append(pos, score(u))
			} else {
				neg = append(neg, score(u))
			}
		}
		return aucOf(pos, neg)
	}
	line := fmt.Sprintf("%s, AUC: plain rule %.3f; three-date drop on dates half clear %.3f, any clear %.3f; largest step drop %.3f, two largest steps' sum %.3f;", k,
		auc(func(u winUnit) float64 { return u.plain }), auc(func(u winUnit) float64 { return u.half3 }), auc(func(u winUnit) float64 { return u.any3 }),
		auc(func(u winUnit) float64 { return u.step }), auc(func(u winUnit) float64 { return u.twoStep }))
	for i, e := range winEdges {
		measured := func(f func(windowDrop) float64) func(winUnit) float64 {
			return func(u winUnit) float64 {
				if !u.ok[i] {
					return math.Inf(-1)
				}
				return f(u.w[i])
			}
		}
		var nt []float64
		for _, u := range us {
			if !u.pos && u.ok[i] {
				nt = append(nt, u.w[i].pre-u.w[i].post)
			}
		}
		line += fmt.Sprintf(" edge %g d: drop %.3f, z %.3f, points agreeing %.3f, peer z %.3f (NT median drop %.3f);", e,
			auc(measured(func(w windowDrop) float64 { return w.pre - w.post })),
			auc(measured(func(w windowDrop) float64 { return (w.pre - w.post) / w.se })),
			auc(measured(func(w windowDrop) float64 { return w.agree })),
			auc(func(u winUnit) float64 {
				if !u.ok[i] || !u.w[i].peerOK {
					return math.Inf(-1)
				}
				return u.w[i].peerZ
			}), num.Median(nt))
	}
	return line
}

// TestWindowFeatures writes every unit's window measures (one row per
// unit and edge) for exploring rules. Column plain is the plain rule's
// largest firing drop, written −1 when the rule never fires (plainMaxT's
// −Inf), as the CSV has carried it since before testkit.LargestFiring.
func TestWindowFeatures(t *testing.T) {
	if *winFeatures == "" {
		t.Skip("research: -winfeatures FILE")
	}
	f, err := os.Create(*winFeatures)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "world,seed,unit,edge,pos,det,plain,truth,pass1,ok,drop,se,z,rel,agree,npts,peerz,peerok,wet,canopy,npre,npost,sigma")
	for _, u := range winUnits(t) {
		plain := u.plain
		if math.IsInf(plain, -1) {
			plain = -1
		}
		for i, e := range winEdges {
			w := u.w[i]
			fmt.Fprintf(f, "%s,%d,%s,%g,%v,%v,%.5f,%.5f,%g,%v,%.5f,%.5f,%.3f,%.3f,%.3f,%d,%.3f,%v,%v,%v,%d,%d,%.5f\n", u.world, u.seed, u.field, e, u.pos, u.det, plain, u.truth, u.pass1, u.ok[i],
				w.pre-w.post, w.se, (w.pre-w.post)/w.se, w.rel, w.agree, w.nPoints, w.peerZ, w.peerOK, w.wet, w.canopy, w.npre, w.npost, w.sigma)
		}
	}
}

// bestWindow is the window measure, levels reaching edgeDays, of the
// short piece of cells (dated within [lo, hi] when lo is set) with the
// largest drop z.
func bestWindow(cells []Cell, p Params, lo, hi time.Time, edgeDays float64) (windowDrop, bool) {
	p.tune = p.tune.withDefaults()
	interior := interiorObs(cells)
	best, found := windowDrop{pre: math.NaN()}, false
	for _, seg := range shortSegments(pooled(interior)) {
		if !lo.IsZero() && (seg[len(seg)-1].Date.Before(lo) || seg[0].Date.After(hi)) {
			continue
		}
		w, ok := windowIn(seg, interior, p, edgeDays)
		if ok && (!found || (w.pre-w.post)/w.se > (best.pre-best.post)/best.se) {
			best, found = w, true
		}
	}
	return best, found
}

// twoSteps returns the largest drop the step test measures on the short
// pieces of cells (dated within [lo, hi] when lo is set; every split
// stepAt can measure, before the threshold and guards) and the largest
// sum of two such drops at splits more than stepDays apart (a fall and a
// spring pass); −1 when none can be measured.
func twoSteps(cells []Cell, p Params, lo, hi time.Time) (float64, float64) {
	p.tune = p.tune.withDefaults()
	one, two := -1.0, -1.0
	for _, seg := range shortSegments(pooled(interiorObs(cells))) {
		if !lo.IsZero() && (seg[len(seg)-1].Date.Before(lo) || seg[0].Date.After(hi)) {
			continue
		}
		s := stepSeries(seg, p)
		sigma := stepSigma(s, p.MinSigma)
		var ds []float64
		var at []time.Time
		for j := range s {
			if l, ok := stepAt(s, j, seg, sigma, &p.tune); ok {
				ds, at = append(ds, l.pre-l.post), append(at, s[j].date)
			}
		}
		for a := range ds {
			one = math.Max(one, ds[a])
			two = math.Max(two, ds[a])
			for b := a + 1; b < len(ds); b++ {
				if at[b].Sub(at[a]) > stepDays*24*time.Hour {
					two = math.Max(two, ds[a]+ds[b])
				}
			}
		}
	}
	return one, two
}

// threeDateDrop is the largest drop between the medians of three dates
// (the first three within 30 days) and of the next three, over the dates
// whose median NDVI of the interior points is below 0.3, and on which at
// least half of the interior points are clear (halfClear, as pooled) or
// any one is; −1 when there are fewer than six such dates.
func threeDateDrop(cells []Cell, halfClear bool) float64 {
	interior := interiorObs(cells)
	need := 1
	if halfClear {
		need = (len(interior) + 1) / 2
	}
	by, byV := map[time.Time][]float64{}, map[time.Time][]float64{}
	for _, obs := range interior {
		for _, o := range obs {
			if !math.IsNaN(o.NDTI) && !math.IsNaN(o.NDVI) {
				by[o.Date], byV[o.Date] = append(by[o.Date], o.NDTI), append(byV[o.Date], o.NDVI)
			}
		}
	}
	var dates []time.Time
	for d, v := range by {
		if len(v) >= need && num.Median(append([]float64(nil), byV[d]...)) < 0.3 {
			dates = append(dates, d)
		}
	}
	sort.Slice(dates, func(i, j int) bool { return dates[i].Before(dates[j]) })
	med3 := func(ds []time.Time) float64 {
		return num.Median([]float64{num.Median(by[ds[0]]), num.Median(by[ds[1]]), num.Median(by[ds[2]])})
	}
	best := -1.0
	for j := 3; j+3 <= len(dates); j++ {
		if dates[j-1].Sub(dates[j-3]) <= 30*24*time.Hour {
			best = math.Max(best, med3(dates[j-3:j])-med3(dates[j:j+3]))
		}
	}
	return best
}
