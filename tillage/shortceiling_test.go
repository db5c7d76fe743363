//go:build research

package tillage

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The short world's identifiability ceiling (issue 30, session 10): how
// far a classifier could go that knows more of the world's latent truth
// than any detector can (docs/tillage.md, "Why 0.85 is out of reach in the
// short world"). Every oracle reads the talhão's own clear dates (a date
// with any point's reading, leaks included) and decides by the fit of the
// world's own no-till law to what it is given — the law the world draws
// no-till talhões from (shortworld_test.go): cover cover0·e^(−decay·t)
// since a harvest in October, stover weathering toward its weathered
// spectrum, soil and straw wetting each by its coefficients:
//
//	L1 exact cover: the field's true straw cover on each clear date;
//	L2 known spectra: the field's noise-free spectra, wetted by the day's
//	   wetness, with its green removed, no snow, haze, sensor gain or
//	   point noise, only the per-date band gains every point of a date
//	   shares (ds, the talhão's own draw) — and the talhão's true soil,
//	   stover, weathered spectra, weathering law and wetting coefficients:
//	   only cover0, decay and the harvest day are fitted;
//	L3 world's law: as L2, but every one of those latents fitted within
//	   the world's own draw ranges (soil class, ±6 % spectra, weathering,
//	   wetting): the twin argument. A positive whose noise-free spectra a
//	   no-till draw reproduces within the per-date gains (χ² ≤ twinChi2)
//	   has a twin: no reading of four bands on those dates tells them
//	   apart.
//
// Each oracle flags the talhões whose χ² of the best no-till fit is
// largest (a generalised likelihood-ratio test against the no-till law:
// the world's positives are the talhões the law does not hold for), at
// Detect's false-positive rate on the same talhões (optimistic: the
// threshold is chosen where it is scored).
//
//	go test -tags research -count=1 -run TestShortCeiling ./tillage/ -ceilingseeds 1,2 -shortn 300 -v

var (
	ceilingSeeds = flag.String("ceilingseeds", "", "research: the short world's oracle ceilings on these seeds (comma-separated; tuning 1,2)")
	ceilingCSV   = flag.String("ceilingcsv", "", "research: write the short world's oracle statistics per talhão to this CSV")
)

// twinChi2 is the χ² (in the per-date band gains) within which a no-till
// draw's noise-free spectra count as a positive's twin: the misfit of one
// band on one date at two standard deviations.
const twinChi2 = 4

// Parameters of the no-till law, in the order of ceilBoxes.
const (
	cpCover0 = iota
	cpDecay
	cpHarvest // days after 1 October
	cpWeather
	cpWeatherDays
	cpKStraw0 // VNIR, straw and soil alike
	cpKStraw1
	cpKStraw2 // SWIR2 as a share of SWIR1's
	cpKSoil1
	cpKSoil2
	cpSoil
	cpStover    = cpSoil + 4
	cpWeathered = cpStover + 4
	cpN         = cpWeathered + 4
)

// ceilBoxes are the world's draw ranges of the no-till law over soil
// class k (shortWorld.draw).
func ceilBoxes(k int) (lo, hi []float64) {
	lo = []float64{0.55, 0.0004, 0, 0.2, 60, 0.15, 0.3, 0.55, 0.3, 0.9}
	hi = []float64{0.95, 0.002, 29, 0.6, 200, 0.3, 0.55, 0.9, 0.55, 1.15}
	for _, r := range []refl{swSoils[k], swStover, swWeathered} {
		for b := range r {
			lo, hi = append(lo, r[b]*0.94), append(hi, r[b]*1.06)
		}
	}
	return lo, hi
}

// ceilObs is what the oracles are given of one talhão: its clear dates
// (days after 1 October of the harvest year), the day's wetness and
// green share, the true cover, the noise-free spectra and the same with
// the per-date band gains.
type ceilObs struct {
	day, wet, green, cover []float64
	y, yn                  []refl
	known                  []float64 // the talhão's latents in the no-till law's order
	truth                  []float64 // known, for no-till talhões (whose law it is)
	ds                     float64
}

// ceilObserve builds the oracles' view of st; noise draws the per-date
// band gains.
func ceilObserve(st shortTalhao, noise *rand.Rand) ceilObs {
	l := st.lat
	oct1 := time.Date(l.harvest.Year(), 10, 1, 0, 0, 0, 0, time.UTC)
	o := ceilObs{ds: l.ds}
	for _, d := range clearDates(st.cells) {
		c, g := l.ground(d)
		w := l.wet[int(d.Sub(l.harvest).Hours()/24)]
		a := 1 - math.Exp(-d.Sub(l.harvest).Hours()/24/l.weatherDays)
		res := wetten4(rmix(l.stover, l.weathered, l.weather*a), l.kStraw, w)
		y := rmix(rmix(wetten4(l.soil, l.kSoil, w), res, c), swGreen, g)
		var yn refl
		for b := range y {
			yn[b] = y[b] * (1 + l.ds*noise.NormFloat64())
		}
		o.day = append(o.day, d.Sub(oct1).Hours()/24)
		o.wet, o.green, o.cover = append(o.wet, w), append(o.green, g), append(o.cover, c)
		o.y, o.yn = append(o.y, y), append(o.yn, yn)
	}
	c0, _ := l.ground(l.harvest)
	c1, _ := l.ground(l.harvest.AddDate(0, 0, 100))
	o.known = []float64{c0, math.Log(c0/c1) / 100, l.harvest.Sub(oct1).Hours() / 24, l.weather, l.weatherDays,
		l.kStraw[0], l.kStraw[1], l.kStraw[2] / l.kStraw[1], l.kSoil[1], l.kSoil[2] / l.kSoil[1]}
	for _, r := range []refl{l.soil, l.stover, l.weathered} {
		o.known = append(o.known, r[:]...)
	}
	if !st.conventional {
		o.truth = o.known
	}
	return o
}

// clearDates are the dates on which any point has a reading.
func clearDates(cells []Cell) []time.Time {
	seen := map[time.Time]bool{}
	for _, c := range cells {
		for _, x := range c.Obs {
			if !math.IsNaN(x.NDTI) {
				seen[x.Date] = true
			}
		}
	}
	var out []time.Time
	for d := range seen {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// noTillCover is the no-till law's cover on day (after 1 October).
func noTillCover(p []float64, day float64) float64 {
	return math.Min(1, p[cpCover0]*math.Exp(-p[cpDecay]*math.Max(0, day-p[cpHarvest])))
}

// noTillSpectrum is the no-till law's noise-free spectrum on day with the
// day's wetness and green share.
func noTillSpectrum(p []float64, day, wet, green float64) refl {
	t := math.Max(0, day-p[cpHarvest])
	var soil, stover, weathered refl
	copy(soil[:], p[cpSoil:])
	copy(stover[:], p[cpStover:])
	copy(weathered[:], p[cpWeathered:])
	res := rmix(stover, weathered, p[cpWeather]*(1-math.Exp(-t/p[cpWeatherDays])))
	kS := [3]float64{p[cpKStraw0], p[cpKStraw1], p[cpKStraw1] * p[cpKStraw2]}
	kB := [3]float64{p[cpKStraw0], p[cpKSoil1], p[cpKSoil1] * p[cpKSoil2]}
	return rmix(rmix(wetten4(soil, kB, wet), wetten4(res, kS, wet), noTillCover(p, day)), swGreen, green)
}

// spectraResiduals are the residuals of the no-till law against y in the
// per-date band gains (σ = ds of the reading).
func (o ceilObs) spectraResiduals(y []refl) func(p, out []float64) {
	return func(p, out []float64) {
		for i := range o.day {
			m := noTillSpectrum(p, o.day[i], o.wet[i], o.green[i])
			for b := range m {
				out[4*i+b] = (m[b] - y[i][b]) / (o.ds * y[i][b])
			}
		}
	}
}

// coverResiduals are the residuals of the no-till law's cover against the
// true cover (σ 0.1 % of it: exact up to the fit's tolerance).
func (o ceilObs) coverResiduals(p, out []float64) {
	for i := range o.day {
		out[i] = (noTillCover(p, o.day[i]) - o.cover[i]) / (0.001 * o.cover[i])
	}
}

// ceilStarts are the fits' starting points over soil class k: the middle
// of the draw ranges, high cover of well weathered stover (the twins'
// corner) and low cover of fresh stover.
func ceilStarts(k int) [][]float64 {
	lo, hi := ceilBoxes(k)
	var out [][]float64
	for _, s := range [][3]float64{{0.75, 0.4, 130}, {0.92, 0.58, 65}, {0.58, 0.22, 190}} {
		p := make([]float64, cpN)
		for j := range p {
			p[j] = (lo[j] + hi[j]) / 2
		}
		p[cpCover0], p[cpWeather], p[cpWeatherDays] = s[0], s[1], s[2]
		out = append(out, p)
	}
	return out
}

// boxFit minimises the sum of squares of res (n residuals) over p within
// [lo, hi] (lo == hi: held fixed) from p0, by Levenberg–Marquardt on a
// logistic map of each free parameter; it returns the least χ² and its p.
func boxFit(res func(p, out []float64), n int, lo, hi, p0 []float64) (float64, []float64) {
	var free []int
	for j := range lo {
		if hi[j] > lo[j] {
			free = append(free, j)
		}
	}
	p := append([]float64(nil), p0...)
	u := make([]float64, len(free))
	for k, j := range free {
		f := min(max((p0[j]-lo[j])/(hi[j]-lo[j]), 1e-3), 1-1e-3)
		u[k] = math.Log(f / (1 - f))
	}
	chi := func(u, r []float64) float64 {
		for k, j := range free {
			p[j] = lo[j] + (hi[j]-lo[j])/(1+math.Exp(-u[k]))
		}
		res(p, r)
		s := 0.0
		for _, x := range r {
			s += x * x
		}
		return s
	}
	r, r2 := make([]float64, n), make([]float64, n)
	jac := make([][]float64, len(free))
	for k := range jac {
		jac[k] = make([]float64, n)
	}
	c, lambda := chi(u, r), 1e-2
	for it := 0; it < 100 && len(free) > 0; it++ {
		for k := range free {
			u[k] += 1e-6
			chi(u, jac[k])
			u[k] -= 1e-6
			for i := range jac[k] {
				jac[k][i] = (jac[k][i] - r[i]) / 1e-6
			}
		}
		un, cn, ok := lmStep(jac, r, u, &lambda, func(v []float64) float64 { return chi(v, r2) }, c)
		if !ok {
			break
		}
		chi(un, r)
		done := c-cn < 1e-7*c+1e-12
		u, c = un, cn
		if done {
			break
		}
	}
	chi(u, r)
	return c, p
}

// lmStep tries damped Gauss–Newton steps from u (λ raised until χ² falls
// below c); ok false when none does.
func lmStep(jac [][]float64, r, u []float64, lambda *float64, chi func([]float64) float64, c float64) ([]float64, float64, bool) {
	m := len(u)
	a := make([][]float64, m)
	g := make([]float64, m)
	for i := range a {
		a[i] = make([]float64, m+1)
		for j := range m {
			for k := range r {
				a[i][j] += jac[i][k] * jac[j][k]
			}
		}
		for k := range r {
			g[i] += jac[i][k] * r[k]
		}
	}
	for ; *lambda < 1e10; *lambda *= 4 {
		s := make([][]float64, m)
		for i := range s {
			s[i] = append([]float64(nil), a[i]...)
			s[i][i] += *lambda*a[i][i] + 1e-12
			s[i][m] = -g[i]
		}
		d := gaussSolve(s)
		un := make([]float64, m)
		for i := range un {
			un[i] = u[i] + d[i]
		}
		if cn := chi(un); cn < c {
			*lambda = max(*lambda/3, 1e-9)
			return un, cn, true
		}
	}
	return nil, 0, false
}

// gaussSolve solves the augmented system s (m rows of m+1) by Gaussian
// elimination with partial pivoting.
func gaussSolve(s [][]float64) []float64 {
	m := len(s)
	for c := range m {
		piv := c
		for i := c + 1; i < m; i++ {
			if math.Abs(s[i][c]) > math.Abs(s[piv][c]) {
				piv = i
			}
		}
		s[c], s[piv] = s[piv], s[c]
		for i := c + 1; i < m; i++ {
			f := s[i][c] / s[c][c]
			for j := c; j <= m; j++ {
				s[i][j] -= f * s[c][j]
			}
		}
	}
	x := make([]float64, m)
	for i := m - 1; i >= 0; i-- {
		v := s[i][m]
		for j := i + 1; j < m; j++ {
			v -= s[i][j] * x[j]
		}
		x[i] = v / s[i][i]
	}
	return x
}

// ceilStats are one talhão's oracle statistics: the least χ² of the
// no-till law against the exact cover (L1), against the spectra with the
// talhão's own latents known (L2) and within the world's ranges (L3),
// noisy (with the per-date gains) and noise-free (the twin's misfit).
type ceilStats struct {
	l1, l2, l3, l2free, l3free float64
	nu2, nu3                   float64 // degrees of freedom of L2 and L3
	l3truth                    float64 // no-till talhões: χ² of L3 at the true parameters (the fit's check)
}

// ceilFits fits the no-till law at every oracle level.
func ceilFits(o ceilObs) ceilStats {
	k := len(o.day)
	s := ceilStats{l3truth: math.NaN(), nu2: float64(max(1, 4*k-3)), nu3: float64(max(1, 4*k-(cpN-1)))}
	fixed := func(lo, hi []float64) ([]float64, []float64) { // all but cover0, decay, harvest at the truth
		for j := cpWeather; j < cpN; j++ {
			lo[j], hi[j] = o.known[j], o.known[j]
		}
		return lo, hi
	}
	lo, hi := fixed(ceilBoxes(0))
	s.l1, s.l2, s.l2free = math.Inf(1), math.Inf(1), math.Inf(1)
	for _, c0 := range []float64{0.6, 0.75, 0.92} {
		p0 := append([]float64(nil), o.known...)
		p0[cpCover0], p0[cpDecay], p0[cpHarvest] = c0, 0.0012, 15
		s.l1 = math.Min(s.l1, first(boxFit(o.coverResiduals, k, lo, hi, p0)))
		s.l2 = math.Min(s.l2, first(boxFit(o.spectraResiduals(o.yn), 4*k, lo, hi, p0)))
		s.l2free = math.Min(s.l2free, first(boxFit(o.spectraResiduals(o.y), 4*k, lo, hi, p0)))
	}
	s.l3, s.l3free = math.Inf(1), math.Inf(1)
	for c := range swSoils {
		lo, hi := ceilBoxes(c)
		for _, p0 := range ceilStarts(c) {
			s.l3 = math.Min(s.l3, first(boxFit(o.spectraResiduals(o.yn), 4*k, lo, hi, p0)))
			s.l3free = math.Min(s.l3free, first(boxFit(o.spectraResiduals(o.y), 4*k, lo, hi, p0)))
		}
	}
	if o.truth != nil {
		r := make([]float64, 4*k)
		o.spectraResiduals(o.yn)(o.truth, r)
		s.l3truth = 0
		for _, x := range r {
			s.l3truth += x * x
		}
	}
	return s
}

func first(c float64, _ []float64) float64 { return c }

// ceilRow is one scored talhão-season.
type ceilRow struct {
	seed     uint64
	i        int
	pos, det bool
	kind     string
	dates    int
	st       ceilStats
}

// z is a noisy χ² as standard deviations above its degrees of freedom.
func z(chi, nu float64) float64 { return (chi - nu) / math.Sqrt(2*nu) }

// ceilLevels are the oracles' scores (larger: less like the no-till law).
var ceilLevels = []struct {
	name  string
	score func(ceilRow) float64
}{
	{"L1 exact cover", func(r ceilRow) float64 { return r.st.l1 }},
	{"L2 known spectra, per-date gains", func(r ceilRow) float64 { return z(r.st.l2, r.st.nu2) }},
	{"L3 world's law, per-date gains", func(r ceilRow) float64 { return z(r.st.l3, r.st.nu3) }},
}

// TestShortCeiling measures the oracles on -ceilingseeds (-shortn
// conventional and as many no-till talhão-seasons each) beside Detect and
// the plain rule at Detect's false-positive rate.
func TestShortCeiling(t *testing.T) {
	if *ceilingSeeds == "" {
		t.Skip("research: -ceilingseeds 1,2")
	}
	var all []ceilRow
	for _, f := range strings.Split(*ceilingSeeds, ",") {
		seed, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		rows, base := ceilRun(seed, *shortN)
		t.Logf("seed %d, %d + %d talhão-seasons:\n%s", seed, *shortN, *shortN, ceilReport(rows, base))
		all = append(all, rows...)
	}
	if *ceilingCSV != "" {
		if err := writeCeilCSV(*ceilingCSV, all); err != nil {
			t.Fatal(err)
		}
	}
}

// ceilRun draws and scores one seed as runShort does.
func ceilRun(seed uint64, n int) ([]ceilRow, baselineScan) {
	rng := rand.New(rand.NewPCG(seed, 0x5407))
	noise := rand.New(rand.NewPCG(seed, 0xce11))
	var w shortWorld
	base := newBaselineScan()
	var rows []ceilRow
	for i := 0; i < 2*n; i++ {
		conv := i%2 == 0
		st := w.draw(rng, conv)
		truth := st.held()
		if conv && len(truth) == 0 {
			continue
		}
		det := len(Detect(st.cells, harnessParams(st.cells, DefaultParams()))) > 0
		base.add(st.cells, len(truth) > 0)
		o := ceilObserve(st, noise)
		rows = append(rows, ceilRow{seed, i, len(truth) > 0, det, tillKind(st), len(o.day), ceilFits(o)})
	}
	return rows, base
}

// ceilFlags flags the rows whose score exceeds the (⌊fpr·N⌋+1)-th largest
// of the negatives': at most that false-positive rate.
func ceilFlags(rows []ceilRow, score func(ceilRow) float64, fpr float64) []bool {
	var neg []float64
	for _, r := range rows {
		if !r.pos {
			neg = append(neg, score(r))
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(neg)))
	th := math.Inf(-1)
	if k := int(math.Floor(fpr*float64(len(neg)) + 1e-9)); k < len(neg) {
		th = neg[k]
	}
	out := make([]bool, len(rows))
	for i, r := range rows {
		out[i] = score(r) > th
	}
	return out
}

// ceilReport is one seed's table: balanced accuracy, recall and FPR of
// Detect, the plain rule and each oracle at Detect's FPR, recall by kind,
// and the positives with a twin.
func ceilReport(rows []ceilRow, base baselineScan) string {
	var det fieldPR
	kinds := map[string]int{}
	for _, r := range rows {
		det.add(r.det, r.pos)
		if r.pos {
			kinds[r.kind]++
		}
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return kinds[ks[i]] > kinds[ks[j]] })
	fpr := ratio(det.fp, det.fp+det.tn)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-34s %6s %6s %6s", "at Detect's FPR", "BA", "recall", "FPR")
	for _, k := range ks {
		fmt.Fprintf(&sb, " %5s", k)
	}
	fmt.Fprintf(&sb, "\n%-34s %6s %6s %6s", "positives by kind", "", "", "")
	for _, k := range ks {
		fmt.Fprintf(&sb, " %5d", kinds[k])
	}
	line := func(name string, flag func(i int) bool) {
		var f fieldPR
		hit := map[string]int{}
		for i, r := range rows {
			f.add(flag(i), r.pos)
			if r.pos && flag(i) {
				hit[r.kind]++
			}
		}
		fmt.Fprintf(&sb, "\n%-34s %6.3f %6.3f %6.3f", name, f.balanced(), ratio(f.tp, f.tp+f.fn), ratio(f.fp, f.fp+f.tn))
		for _, k := range ks {
			fmt.Fprintf(&sb, " %5.2f", ratio(hit[k], kinds[k]))
		}
	}
	line("Detect", func(i int) bool { return rows[i].det })
	b, drop := base.at(fpr)
	fmt.Fprintf(&sb, "\n%-34s %6.3f %6.3f %6.3f (drop > %.4f)", "plain rule at equal FP", b.balanced(), ratio(b.tp, b.tp+b.fn), ratio(b.fp, b.fp+b.tn), drop)
	for _, l := range ceilLevels {
		fl := ceilFlags(rows, l.score, fpr)
		line(l.name, func(i int) bool { return fl[i] })
	}
	line("L1 identifiable (χ² > 4)", func(i int) bool { return rows[i].st.l1 > twinChi2 })
	line("L2 identifiable noise-free", func(i int) bool { return rows[i].st.l2free > twinChi2 })
	line("L3 no twin (noise-free χ² > 4)", func(i int) bool { return rows[i].st.l3free > twinChi2 })
	miss := 0
	for _, r := range rows {
		if !r.pos && r.st.l3 > r.st.l3truth*(1+1e-6)+1e-9 {
			miss++
		}
	}
	fmt.Fprintf(&sb, "\nL3 fit check: no-till talhões whose best fit is worse than their truth: %d of %d", miss, det.fp+det.tn)
	return sb.String()
}

// writeCeilCSV writes the rows' statistics.
func writeCeilCSV(path string, rows []ceilRow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, "seed,i,pos,kind,det,dates,l1,l2,l3,l2free,l3free,nu2,nu3,l3truth")
	for _, r := range rows {
		s := r.st
		fmt.Fprintf(f, "%d,%d,%v,%s,%v,%d,%.4g,%.4g,%.4g,%.4g,%.4g,%g,%g,%.4g\n", r.seed, r.i, r.pos, r.kind, r.det, r.dates,
			s.l1, s.l2, s.l3, s.l2free, s.l3free, s.nu2, s.nu3, s.l3truth)
	}
	return f.Close()
}
