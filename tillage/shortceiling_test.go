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
// than any detector can (docs/tillage.md, "Why 0.85 is not reached in the
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
//	L3 world's ranges: as L2, but every one of those latents fitted
//	   within the world's own draw ranges (soil class, ±6 % spectra,
//	   weathering, wetting): the twin argument. A positive whose
//	   noise-free spectra a no-till draw reproduces within the per-date
//	   gains (χ² ≤ twinChi2, or 1) has a twin: no reading of four bands on
//	   those dates tells them apart better than those gains allow;
//	L3d as L3, the day's wetness not given: fitted on each date, drying
//	   between dates no faster than the world's law (wetDrying);
//	L3w as L3, the spectra known only within ±25 % of the world's
//	   (ceilWide; soil anywhere from its darkest to its brightest class);
//	L3dw both: what four bands say to a reader who knows the world's law
//	   but neither its spectra nor the day's wetness.
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

// ceilBoxesWide are ceilBoxes with the spectra known only within ±a of
// the world's: stover and weathered stover around the world's, soil
// anywhere from its darkest to its brightest class.
func ceilBoxesWide(a float64) (lo, hi []float64) {
	lo, hi = ceilBoxes(0)
	for j := cpSoil; j < cpN; j++ {
		mid := (lo[j] + hi[j]) / 2
		lo[j], hi[j] = mid*(1-a), mid*(1+a)
	}
	for b := range 4 {
		for _, r := range swSoils {
			lo[cpSoil+b], hi[cpSoil+b] = min(lo[cpSoil+b], r[b]*(1-a)), max(hi[cpSoil+b], r[b]*(1+a))
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
	rho                    []float64 // the drying law's factor from the previous clear date
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
		rho := 1.0
		if n := len(o.day); n > 0 {
			for x := oct1.AddDate(0, 0, int(o.day[n-1]+0.5)+1); !x.After(d); x = x.AddDate(0, 0, 1) {
				rho *= math.Exp(-1 / dryDaysUS[x.Month()-1])
			}
		}
		o.rho = append(o.rho, rho)
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

// wetMode is what an oracle knows of each date's wetness.
type wetMode int

const (
	wetKnown  wetMode = iota // given
	wetDrying                // fitted on each date, drying no faster than the world's law between dates
)

// spectraResiduals are the residuals of the no-till law against y in the
// per-date band gains (σ = ds of the reading). Without the wetness given,
// it is fitted (the spectrum is linear in it: weighted least squares per
// date, then the drying law's bound between dates).
func (o ceilObs) spectraResiduals(y []refl, mode wetMode) func(p, out []float64) {
	return func(p, out []float64) {
		n := len(o.day)
		m0, m1, w, a := make([]refl, n), make([]refl, n), make([]float64, n), make([]float64, n)
		for i := range o.day {
			if mode == wetKnown {
				m0[i], w[i] = noTillSpectrum(p, o.day[i], o.wet[i], o.green[i]), 0
				continue
			}
			m0[i], m1[i] = noTillSpectrum(p, o.day[i], 0, o.green[i]), noTillSpectrum(p, o.day[i], 1, o.green[i])
			for b := range m0[i] {
				v := (m1[i][b] - m0[i][b]) / y[i][b]
				w[i], a[i] = w[i]+v*(y[i][b]-m0[i][b])/y[i][b], a[i]+v*v
			}
			w[i] /= a[i]
		}
		if mode == wetDrying {
			dryingFit(w, a, o.rho)
		}
		for i := range o.day {
			m := rmix(m0[i], m1[i], min(1, max(0, w[i])))
			for b := range m {
				out[4*i+b] = (m[b] - y[i][b]) / (o.ds * y[i][b])
			}
		}
	}
}

// dryingFit replaces the dates' least-squares wetness w (weights a) by
// the closest sequence that dries no faster than the law: w[k] ≥
// rho[k]·w[k−1]. With P the running product of rho and v = w/P, the bound
// is v nondecreasing: isotonic regression (pool adjacent violators) of
// w/P with weights a·P².
func dryingFit(w, a, rho []float64) {
	type block struct {
		sum, wt float64
		n       int
	}
	var bl []block
	pk := 1.0
	ps := make([]float64, len(w))
	for k := range w {
		if k > 0 {
			pk *= rho[k]
		}
		ps[k] = pk
		bw := a[k] * pk * pk
		bl = append(bl, block{bw * w[k] / pk, bw, 1})
		for len(bl) > 1 && bl[len(bl)-2].sum/bl[len(bl)-2].wt > bl[len(bl)-1].sum/bl[len(bl)-1].wt {
			x, y := bl[len(bl)-2], bl[len(bl)-1]
			bl = append(bl[:len(bl)-2], block{x.sum + y.sum, x.wt + y.wt, x.n + y.n})
		}
	}
	k := 0
	for _, b := range bl {
		for range b.n {
			w[k] = b.sum / b.wt * ps[k]
			k++
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

// ceilStarts are the fits' starting points in [lo, hi]: the middle of
// the draw ranges, high cover of well weathered stover (the twins'
// corner) and low cover of fresh stover.
func ceilStarts(lo, hi []float64) [][]float64 {
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

// ceilLevel is one oracle: what it is given of the talhão's latents (the
// ranges the no-till law is fitted within, the wetness) and whether its
// twins are counted (the fit against the noise-free spectra).
type ceilLevel struct {
	name  string
	boxes string // "cover" (L1), "known", "world" (±6 %), "wide" (±25 %)
	wet   wetMode
	twins bool
}

// ceilLevels are the oracles, from the most to the least told.
var ceilLevels = []ceilLevel{
	{"L1 exact cover", "cover", wetKnown, false},
	{"L2 known latents, wetness given", "known", wetKnown, true},
	{"L3 world's ranges, wetness given", "world", wetKnown, true},
	{"L3d world's ranges, drying law", "world", wetDrying, true},
	{"L3w spectra ±25 %, wetness given", "wide", wetKnown, false},
	{"L3dw spectra ±25 %, drying law", "wide", wetDrying, true},
}

// ceilWide is the spectra's range of the wide oracles (±25 %).
const ceilWide = 0.25

// ceilStats are one talhão's oracle statistics by level: the least χ² of
// the no-till law against the noisy readings (with the per-date gains)
// and, for levels counting twins, against the noise-free ones (the
// twin's misfit); nu the degrees of freedom; truth the χ² at the true
// parameters (no-till talhões, level L3: the fit's check).
type ceilStats struct {
	chi, free, nu []float64
	truth         float64
}

// ceilFits fits the no-till law at every oracle level.
func ceilFits(o ceilObs) ceilStats {
	k := len(o.day)
	boxes := ceilBoxSets(o)
	s := ceilStats{truth: math.NaN()}
	for _, l := range ceilLevels {
		var res, free func(p, out []float64)
		n, nfree := 4*k, 3
		switch {
		case l.boxes == "cover":
			res, n = o.coverResiduals, k
		default:
			res, free = o.spectraResiduals(o.yn, l.wet), o.spectraResiduals(o.y, l.wet)
		}
		if l.boxes != "cover" && l.boxes != "known" {
			nfree = cpN - 1
		}
		if l.wet != wetKnown {
			nfree += k
		}
		s.chi = append(s.chi, ceilBest(res, n, boxes[l.boxes]))
		s.nu = append(s.nu, float64(max(1, n-nfree)))
		fr := math.NaN()
		if l.twins {
			fr = ceilBest(free, n, boxes[l.boxes])
		}
		s.free = append(s.free, fr)
	}
	if o.truth != nil {
		s.truth = chi2At(o.spectraResiduals(o.yn, wetKnown), 4*k, o.truth)
	}
	return s
}

// ceilBoxSets are the oracles' ranges and starting points.
func ceilBoxSets(o ceilObs) map[string][]ceilBox {
	lo, hi := ceilBoxes(0)
	for j := cpWeather; j < cpN; j++ { // all but cover0, decay, harvest at the truth
		lo[j], hi[j] = o.known[j], o.known[j]
	}
	var known [][]float64
	for _, c0 := range []float64{0.6, 0.75, 0.92} {
		p0 := append([]float64(nil), o.known...)
		p0[cpCover0], p0[cpDecay], p0[cpHarvest] = c0, 0.0012, 15
		known = append(known, p0)
	}
	out := map[string][]ceilBox{"cover": {{lo, hi, known}}, "known": {{lo, hi, known}}}
	for c := range swSoils {
		lo, hi := ceilBoxes(c)
		out["world"] = append(out["world"], ceilBox{lo, hi, ceilStarts(lo, hi)})
	}
	lo, hi = ceilBoxesWide(ceilWide)
	out["wide"] = []ceilBox{{lo, hi, ceilStarts(lo, hi)}}
	return out
}

// chi2At is the sum of squares of res at p.
func chi2At(res func(p, out []float64), n int, p []float64) float64 {
	r := make([]float64, n)
	res(p, r)
	s := 0.0
	for _, x := range r {
		s += x * x
	}
	return s
}

// ceilBox is a range of the no-till law's parameters and the fit's
// starting points in it.
type ceilBox struct {
	lo, hi []float64
	starts [][]float64
}

// ceilBest is the least χ² of res over the boxes' fits.
func ceilBest(res func(p, out []float64), n int, boxes []ceilBox) float64 {
	best := math.Inf(1)
	for _, b := range boxes {
		for _, p0 := range b.starts {
			c, _ := boxFit(res, n, b.lo, b.hi, p0)
			best = math.Min(best, c)
		}
	}
	return best
}

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
	for j, l := range ceilLevels {
		score := func(r ceilRow) float64 { return z(r.st.chi[j], r.st.nu[j]) }
		if l.boxes == "cover" {
			score = func(r ceilRow) float64 { return r.st.chi[j] }
		}
		fl := ceilFlags(rows, score, fpr)
		line(l.name, func(i int) bool { return fl[i] })
	}
	line("L1 identifiable (χ² > 4)", func(i int) bool { return rows[i].st.chi[0] > twinChi2 })
	for j, l := range ceilLevels {
		if l.twins {
			for _, d := range []float64{twinChi2, 1} {
				line(fmt.Sprintf("%s no twin (noise-free χ² > %g)", strings.Fields(l.name)[0], d), func(i int) bool { return rows[i].st.free[j] > d })
			}
		}
	}
	miss := 0
	for _, r := range rows {
		if !r.pos && r.st.chi[2] > r.st.truth*(1+1e-6)+1e-9 {
			miss++
		}
	}
	fmt.Fprintf(&sb, "\nfit check: no-till talhões whose best L3 fit is worse than their truth: %d of %d", miss, det.fp+det.tn)
	return sb.String()
}

// writeCeilCSV writes the rows' statistics.
func writeCeilCSV(path string, rows []ceilRow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprint(f, "seed,i,pos,kind,det,dates,truth")
	for _, l := range ceilLevels {
		n := strings.Fields(l.name)[0]
		fmt.Fprintf(f, ",%s,%s_free,%s_nu", n, n, n)
	}
	fmt.Fprintln(f)
	for _, r := range rows {
		fmt.Fprintf(f, "%d,%d,%v,%s,%v,%d,%.4g", r.seed, r.i, r.pos, r.kind, r.det, r.dates, r.st.truth)
		for j := range ceilLevels {
			fmt.Fprintf(f, ",%.4g,%.4g,%g", r.st.chi[j], r.st.free[j], r.st.nu[j])
		}
		fmt.Fprintln(f)
	}
	return f.Close()
}
