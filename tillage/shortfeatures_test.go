//go:build research

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
)

// The short world's talhão-level features on the tuning seeds (issue 30,
// session 8): what a single talhão's window shows beside what Detect and
// the plain rule decide, one CSV row per talhão-season, to measure how far
// level, step, trend, spatial and spectral statistics can separate
// conventional from no-till talhões (docs/tillage.md, "Short series"):
//
//	go test -tags research -run TestShortFeatures ./tillage/ -shortfeatures f.csv -shortn 300

var shortFeatures = flag.String("shortfeatures", "", "research: write the short world's talhão features on the tuning seeds to this CSV")

// TestShortFeatures writes the features of -shortn conventional and as
// many no-till talhão-seasons of each tuning seed.
func TestShortFeatures(t *testing.T) {
	if *shortFeatures == "" {
		t.Skip("research: -shortfeatures FILE")
	}
	f, err := os.Create(*shortFeatures)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "seed,i,conv,pos,skip,kind,det,tests,plain,"+strings.Join(featureNames, ","))
	for _, seed := range []uint64{1, 2} {
		rng := rand.New(rand.NewPCG(seed, 0x5407))
		var w shortWorld
		for i := 0; i < 2*(*shortN); i++ {
			conv := i%2 == 0
			st := w.draw(rng, conv)
			truth := st.held()
			q := harnessParams(st.cells, DefaultParams())
			var tests []string
			for _, e := range Detect(st.cells, q) {
				tests = append(tests, e.Test)
			}
			fmt.Fprintf(f, "%d,%d,%v,%v,%v,%s,%d,%s,%.4f", seed, i, conv, len(truth) > 0, conv && len(truth) == 0, tillKind(st), len(tests), strings.Join(tests, "|"), plainDrop(st.cells))
			for _, x := range talhaoFeatures(st.cells, q) {
				fmt.Fprintf(f, ",%.5g", x)
			}
			fmt.Fprintln(f)
		}
	}
}

// plainDrop is the largest of shortDrops at which the plain rule
// (MedianNDTIDrop) flags the talhão, −1 when none does.
func plainDrop(cells []Cell) float64 {
	best := -1.0
	for _, x := range shortDrops {
		if len(MedianNDTIDrop(cells, x)) > 0 {
			best = x
		}
	}
	return best
}

var featureNames = []string{"r", "se", "n", "rfirst", "rlast", "rmin3", "zstep", "zguard", "cell15", "cell25", "slope", "wet", "vnir", "swv", "zL", "zQ", "joint", "zLmax", "jointraw", "zNj", "zLj", "wetse", "wetn", "wetsd"}

// talhaoFeatures measures the features of featureNames on the last short
// piece of the talhão's series (NaN when there is none): the low-residue
// level r, its SE and dates; the median straw share of the first and last
// five bare dates and the lowest median of three consecutive ones; the
// largest step z before and after the step test's guards; the share of
// points whose median straw share is below 15 % and 25 %; the NDTI trend
// (per day); the slope of NDTI on log(SWIR/VNIR) over every bare date
// (wet ones included: straw loses NDTI as it wets, soil little); the
// median Red+NIR and SWIR/VNIR.
func talhaoFeatures(cells []Cell, q Params) []float64 {
	out := make([]float64, len(featureNames))
	for i := range out {
		out[i] = math.NaN()
	}
	q.tune = q.tune.withDefaults()
	segs := shortSegments(pooled(interiorObs(cells)))
	if len(segs) == 0 {
		return out
	}
	seg := segs[len(segs)-1]
	if l, ok := residueIn(seg, q); ok {
		out[0], out[1], out[2] = l.r, l.se, float64(l.n)
	}
	s := stepSeries(seg, q)
	if rs := dateShares(seg, s, q); len(rs) >= 5 {
		out[3], out[4] = num.Median(append([]float64(nil), rs[:5]...)), num.Median(append([]float64(nil), rs[len(rs)-5:]...))
		out[5] = math.Inf(1)
		for k := 0; k+3 <= len(rs); k++ {
			out[5] = math.Min(out[5], num.Median(append([]float64(nil), rs[k:k+3]...)))
		}
	}
	out[6], out[7] = stepFeatures(seg, s, q)
	out[8], out[9] = cellShares(cells, seg[0].Date, seg[len(seg)-1].Date, q)
	if len(s) > 3 {
		var xs, ys []float64
		for _, o := range s {
			xs, ys = append(xs, o.date.Sub(s[0].date).Hours()/24), append(ys, o.ndti)
		}
		out[10] = olsSlope(xs, ys)
	}
	out[11], out[12], out[13] = wetFeatures(seg, q)
	copy(out[14:], brightFeatures(seg, s, q))
	out[21], out[22], out[23] = wetSE(seg, q)
	return out
}

// dateShares is the straw share of each date of s as residueIn reads it
// (the larger of the talhão's soil's and the reference soil's).
func dateShares(seg []pooledObs, s []stepObs, q Params) []float64 {
	u, ok := newUnmixer(q)
	ref := q
	ref.Soil = DefaultParams().Soil
	uRef, okRef := newUnmixer(ref)
	if !ok || !okRef {
		return nil
	}
	ndvi := map[time.Time]float64{}
	for _, o := range seg {
		ndvi[o.Date] = o.NDVI
	}
	var rs []float64
	for _, o := range s {
		g, st, so := u.Fractions(ndvi[o.date], o.ndti)
		gr, str, sor := uRef.Fractions(ndvi[o.date], o.ndti)
		if math.IsNaN(g) || math.IsNaN(gr) {
			continue
		}
		a := clearObs{green: g, straw: st, soil: so}.strawShare()
		rs = append(rs, math.Max(a, clearObs{green: gr, straw: str, soil: sor}.strawShare()))
	}
	return rs
}

// stepFeatures is the largest step z of the piece, and the largest that
// passes the step test's guards (the portfolio's aside).
func stepFeatures(seg []pooledObs, s []stepObs, q Params) (float64, float64) {
	zb, zg := math.NaN(), math.NaN()
	sigma := stepSigma(s, q.MinSigma)
	for j := range s {
		l, ok := stepAt(s, j, seg, sigma, &q.tune)
		if !ok {
			continue
		}
		z := (l.pre - l.post) / l.se
		if !(z <= zb) {
			zb = z
		}
		if canopyBefore(seg, s[j].date, &q.tune) || l.pre-l.post < q.tune.mdRel*(l.pre-q.Soil.NDTI) || stepLate(s, j, l) ||
			stepIsRamp(s, j, l, sigma) || stepRecovers(s, j, l, seg, &q.tune) || stepWet(s, j, l) {
			continue
		}
		if !(z <= zg) {
			zg = z
		}
	}
	return zb, zg
}

// cellShares is the share of the points with readings in [lo, hi] whose
// median straw share there is below 15 % and below 25 %.
func cellShares(cells []Cell, lo, hi time.Time, q Params) (float64, float64) {
	u, _ := newUnmixer(q)
	var n15, n25, n int
	for _, c := range cells {
		var v []float64
		for _, x := range prepare(c.Obs, q, u) {
			if !x.date.Before(lo) && !x.date.After(hi) && x.green <= q.tune.rPreGreen {
				v = append(v, x.strawShare())
			}
		}
		if len(v) == 0 {
			continue
		}
		n++
		m := num.Median(v)
		if m < 0.15 {
			n15++
		}
		if m < 0.25 {
			n25++
		}
	}
	return ratio(n15, n), ratio(n25, n)
}

// wetFeatures is the slope of NDTI on log(SWIR/VNIR relative to its
// median) over the piece's bare dates, wet ones included, and the median
// Red+NIR and SWIR/VNIR.
func wetFeatures(seg []pooledObs, q Params) (slope, vnir, swv float64) {
	var sw, vn []float64
	var bare []pooledObs
	for _, o := range seg {
		if !math.IsNaN(o.NDTI) && o.NDVI < q.tune.mdBareNDVI && o.NDVI > stepSnowNDVI && o.swir > 0 && o.vnir > 0 {
			sw, vn, bare = append(sw, o.swir), append(vn, o.vnir), append(bare, o)
		}
	}
	if len(bare) < 6 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	swv, vnir = num.Median(sw)/num.Median(vn), num.Median(vn)
	var xs, ys []float64
	for _, o := range bare {
		xs, ys = append(xs, math.Log(o.swir/o.vnir/swv)), append(ys, o.NDTI)
	}
	return olsSlope(xs, ys), vnir, swv
}

// olsSlope is the least-squares slope of ys on xs (NaN when xs are equal).
func olsSlope(xs, ys []float64) float64 {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return math.NaN()
	}
	return (n*sxy - sx*sy) / d
}

// brightSeries is s with each date's value replaced by f of it (log
// brightness), each sensor's offset removed; ok false when a date lacks
// reflectances.
func brightSeries(s []stepObs, f func(stepObs) float64) ([]stepObs, bool) {
	b := make([]stepObs, len(s))
	for i, o := range s {
		if !(o.swir > 0 && o.vnir > 0) {
			return nil, false
		}
		b[i] = o
		b[i].ndti = f(o)
	}
	off := sensorOffsets(b)
	for i := range b {
		b[i].ndti -= off[b[i].sensor]
	}
	return b, true
}

// brightFeatures: at the best guarded NDTI split, the drop of log(Red+NIR)
// and the rise of log(SWIR/VNIR) in standard errors; the largest over
// guarded splits of min(zNDTI, zVNIR); the largest zVNIR of any split;
// the largest min(zN, zL) over splits before guards; zN and zL at the
// joint's best guarded split.
func brightFeatures(seg []pooledObs, s []stepObs, q Params) []float64 {
	out := []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	sL, ok1 := brightSeries(s, func(o stepObs) float64 { return math.Log(o.vnir) })
	sQ, ok2 := brightSeries(s, func(o stepObs) float64 { return -math.Log(o.swir / o.vnir) })
	if !ok1 || !ok2 || len(s) < 5 {
		return out
	}
	t := &q.tune
	sigma := stepSigma(s, q.MinSigma)
	sigL, sigQ := stepSigma(sL, 1e-4), stepSigma(sQ, 1e-4)
	zg := math.Inf(-1)
	for j := range s {
		l, ok := stepAt(s, j, seg, sigma, t)
		if !ok {
			continue
		}
		lL, _ := stepAt(sL, j, seg, sigL, t)
		lQ, _ := stepAt(sQ, j, seg, sigQ, t)
		z, zL, zQ := (l.pre-l.post)/l.se, (lL.pre-lL.post)/lL.se, (lQ.pre-lQ.post)/lQ.se
		if !(zL <= out[3]) {
			out[3] = zL
		}
		if m := math.Min(z, zL); !(m <= out[4]) {
			out[4] = m
		}
		if canopyBefore(seg, s[j].date, t) || l.pre-l.post < t.mdRel*(l.pre-q.Soil.NDTI) || stepLate(s, j, l) ||
			stepIsRamp(s, j, l, sigma) || stepRecovers(s, j, l, seg, t) || stepWet(s, j, l) {
			continue
		}
		if z > zg {
			zg, out[0], out[1] = z, zL, zQ
		}
		if m := math.Min(z, zL); !(m <= out[2]) {
			out[2], out[5], out[6] = m, z, zL
		}
	}
	return out
}

// tillKind names the season's tillages: a (autumn, before the window), A
// (autumn, held), s / S (spring, not held / held).
func tillKind(st shortTalhao) string {
	held := map[time.Time]bool{}
	for _, d := range st.held() {
		held[d] = true
	}
	k := ""
	for _, d := range st.tillage {
		c := "a"
		if d.Month() < 7 {
			c = "s"
		}
		if held[d] {
			c = strings.ToUpper(c)
		}
		k += c
	}
	if k == "" {
		k = "-"
	}
	return k
}

// wetSE is the standard error of wetFeatures' slope, its number of dates
// and the spread of its x (log SWIR/VNIR).
func wetSE(seg []pooledObs, q Params) (float64, float64, float64) {
	var xs, ys []float64
	for _, o := range seg {
		if !math.IsNaN(o.NDTI) && o.NDVI < q.tune.mdBareNDVI && o.NDVI > stepSnowNDVI && o.swir > 0 && o.vnir > 0 {
			xs, ys = append(xs, math.Log(o.swir/o.vnir)), append(ys, o.NDTI)
		}
	}
	if len(xs) < 6 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	b := olsSlope(xs, ys)
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	n := float64(len(xs))
	mx, my = mx/n, my/n
	a := my - b*mx
	var sxx, rss float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		e := ys[i] - a - b*xs[i]
		rss += e * e
	}
	return math.Sqrt(rss / (n - 2) / sxx), n, math.Sqrt(sxx / n)
}
