//go:build research

package coverage

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/spectral"
)

var (
	soilLines    = flag.Bool("soillines", false, "diagnostics: TestSoilLines, the soil where the talhão's residue periods' straw–soil lines meet (tuning seed -hardtune)")
	soilLinesRun = flag.Bool("soillinesrun", false, "TestSoilLines: also run the harder harness with the estimate")
	soilLinesMin = flag.Float64("soillinesspread", 0.02, "TestSoilLines: a period's line needs this spread (sd along it, SWIR reflectance)")
)

// soilLinesEstimate is the soil where the straw–soil mixing lines of the
// talhão's residue periods meet in (SWIR1, SWIR2): within a period between
// two canopies one residue lies on the ground, so its dry, not-wet dates
// are mixtures f·S + (1 − f)·B on a line through the soil B; residues of
// different periods (type, age) give lines of different slopes that all
// pass through the one soil. False with fewer than two usable lines or
// lines too alike to meet.
func soilLinesEstimate(cells [][]Obs) (swir1, swir2 float64, lines int, ok bool) {
	dates, ndvi, ndti, swir := dateMedians(cells)
	wet := wetDates(dates, swir)
	type line struct{ cx, cy, nx, ny, w float64 }
	var ls []line
	var xs, ys []float64
	flush := func() {
		defer func() { xs, ys = xs[:0], ys[:0] }()
		if len(xs) < 6 {
			return
		}
		mx, _ := meanSD(xs)
		my, _ := meanSD(ys)
		var sxx, syy, sxy float64
		for i := range xs {
			dx, dy := xs[i]-mx, ys[i]-my
			sxx, syy, sxy = sxx+dx*dx, syy+dy*dy, sxy+dx*dy
		}
		n := float64(len(xs))
		sxx, syy, sxy = sxx/n, syy/n, sxy/n
		tr, det := sxx+syy, sxx*syy-sxy*sxy
		l1 := tr/2 + math.Sqrt(math.Max(0, tr*tr/4-det))
		l2 := tr - l1
		if math.Sqrt(l1) < *soilLinesMin || l2 > l1/10 {
			return
		}
		// Direction of l1: (sxy, l1 − sxx); the normal is perpendicular.
		dx, dy := sxy, l1-sxx
		if math.Hypot(dx, dy) < 1e-12 {
			dx, dy = 1, 0
		}
		h := math.Hypot(dx, dy)
		ls = append(ls, line{mx, my, -dy / h, dx / h, n * l1 / math.Max(l2, 1e-8)})
	}
	for i := range dates {
		if ndvi[i] >= 0.4 {
			flush()
			continue
		}
		if ndvi[i] >= 0.25 || wet[dates[i]] || !finite(ndti[i]) || !finite(swir[i]) {
			continue
		}
		xs, ys = append(xs, swir[i]*(1+ndti[i])/2), append(ys, swir[i]*(1-ndti[i])/2)
	}
	flush()
	if len(ls) < 2 {
		return math.NaN(), math.NaN(), len(ls), false
	}
	// Least squares point: Σ w n nᵀ B = Σ w n nᵀ c.
	var a, b, c, u, v float64
	for _, l := range ls {
		w := 1.0
		a, b, c = a+w*l.nx*l.nx, b+w*l.nx*l.ny, c+w*l.ny*l.ny
		d := l.nx*l.cx + l.ny*l.cy
		u, v = u+w*l.nx*d, v+w*l.ny*d
	}
	det := a*c - b*b
	if det < 0.05*float64(len(ls))*float64(len(ls))/4 {
		return math.NaN(), math.NaN(), len(ls), false
	}
	swir1, swir2 = (c*u-b*v)/det, (a*v-b*u)/det
	if swir1 <= 0 || swir2 <= 0 || swir1 > 1 || swir2 > 1 {
		return math.NaN(), math.NaN(), len(ls), false
	}
	return swir1, swir2, len(ls), true
}

// TestSoilLines measures soilLinesEstimate against the true soil and the
// soil calibrate settles on (-soillines), and with -soillinesrun reads the
// harder harness with it where it is made.
func TestSoilLines(t *testing.T) {
	if !*soilLines {
		t.Skip("diagnostics: run with -soillines")
	}
	rng := rand.New(rand.NewPCG(*hardTuneSeed, 2027))
	var made, nLines int
	var eEst, eCal, eCalAll float64
	for k := 0; k < *hardTuneN; k++ {
		_, f := harderField6(rng, pheno.SpectraVaried)
		p, _ := calibrate(f.cells, hardParams())
		truth := soilOracleSoilEnd(f).NDTI
		eCalAll += math.Abs(p.Soil.NDTI - truth)
		s1, s2, n, ok := soilLinesEstimate(f.cells)
		nLines += n
		if !ok {
			continue
		}
		made++
		est := (s1 - s2) / (s1 + s2)
		eEst += math.Abs(est - truth)
		eCal += math.Abs(p.Soil.NDTI - truth)
		if k < 30 {
			t.Logf("talhão %3d %-20s true NDTI %.3f SWIR %.3f  calibrated %.3f  lines (%d) %.3f SWIR %.3f", k, f.sc.SoilKind(), truth, soilOracleSoilEnd(f).SWIR, p.Soil.NDTI, n, est, s1+s2)
		}
	}
	t.Logf("seed %d: estimate made on %d of %d talhões (%.1f lines each); soil NDTI MAE there: lines %.4f, calibrated %.4f (calibrated on all %.4f)",
		*hardTuneSeed, made, *hardTuneN, float64(nLines)/float64(*hardTuneN), eEst/float64(made), eCal/float64(made), eCalAll/float64(*hardTuneN))
	if !*soilLinesRun {
		return
	}
	defer func() { oracleSoil = nil }()
	for _, decl := range []bool{false, true} {
		hook := func(f synthField) {
			oracleSoil = nil
			s1, s2, _, ok := soilLinesEstimate(f.cells)
			if !ok {
				return
			}
			oracleSoil = func(e spectral.Endmember, _ bool) spectral.Endmember {
				e.NDTI, e.SWIR = (s1-s2)/(s1+s2), s1+s2
				return e
			}
		}
		r := runHarderHook(*hardTuneN, 6, *hardTuneSeed, pheno.SpectraVaried, nil, decl, hook, false)
		r.readings = []readingRec{{0, 0, 0}, {1, 1, 1}}
		t.Logf("soil from the lines (declared %v), seed %d:\n%v", decl, *hardTuneSeed, summarise(r))
	}
}
