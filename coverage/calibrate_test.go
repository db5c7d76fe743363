package coverage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/zarc"
)

var nan = math.NaN()

// TestAccuracyCalibrateLag measures, on pheno fields, the lag between the
// true sowing and the green-up crossing at several fractions of the
// amplitude; docs/coverage.md quotes its table. Runs with -accuracy.
func TestAccuracyCalibrateLag(t *testing.T) {
	if !*accuracy {
		t.Skip("calibration table: run with -accuracy")
	}
	fracs := []float64{0.2, 0.25, 0.3, 0.35, 0.4, 0.5}
	for _, crop := range []string{"soja", "milho"} {
		lags := make([][]float64, len(fracs))
		rng := rand.New(rand.NewPCG(7, 11))
		for k := 0; k < 120; k++ {
			f := newSynthField(rng, synthOptions{start: day("2022-01-01"), end: day("2026-08-01"), revisit: 5, nCells: 8, crop: crop, cloudScale: 1})
			med := MedianSeries(f.cells)
			for fi, fr := range fracs {
				p := Params{GreenUp: Ratio(fr)}.withDefaults()
				s := smoothNDVI(med, p.Lambda, p.RobustIter)
				for _, season := range []Season{NewSeason(2023, MonthDay{}), NewSeason(2024, MonthDay{}), NewSeason(2025, MonthDay{})} {
					truth, ok := f.trueSowing(season)
					if !ok {
						continue
					}
					cs, main := seasonCycles(s, season, zarc.Crop(crop), p)
					if main < 0 {
						continue
					}
					lags[fi] = append(lags[fi], s.date(0).AddDate(0, 0, int(math.Round(cs[main].sos))).Sub(truth).Hours()/24)
				}
			}
		}
		t.Logf("crop %s: lag (days) from true sowing to green-up crossing", crop)
		t.Logf("%8s %5s %7s %7s %7s %7s", "fraction", "n", "mean", "median", "sd", "p10-p90")
		for fi, fr := range fracs {
			l := lags[fi]
			sort.Float64s(l)
			m, sd := meanSD(l)
			t.Logf("%8.2f %5d %7.1f %7.1f %7.1f %s", fr, len(l), m, l[len(l)/2], sd, fmt.Sprintf("%.0f..%.0f", l[len(l)/10], l[len(l)*9/10]))
		}
	}
}

func meanSD(x []float64) (float64, float64) {
	if len(x) == 0 {
		return nan, nan
	}
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	v := 0.0
	for _, e := range x {
		v += (e - m) * (e - m)
	}
	return m, math.Sqrt(v / float64(len(x)))
}

// TestAccuracyCalibrateEndmembers fits the effective NDTI endmembers on
// pheno fields (seed independent of the harness): for each season, with the
// true sowing date, the talhão mean of the cells' median NDTI in the window
// against the true straw cover, by least squares NDTI = bare + (straw −
// bare) × cover. docs/coverage.md quotes the result. Runs with -accuracy.
func TestAccuracyCalibrateEndmembers(t *testing.T) {
	if !*accuracy {
		t.Skip("calibration: run with -accuracy")
	}
	rng := rand.New(rand.NewPCG(17, 19))
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	p := Params{Estimator: "median"}.withDefaults() // the NDTI estimators' endmembers, NDVI < 0.3
	var xs, ys []float64
	for k := 0; k < 300; k++ {
		crop := "soja"
		if rng.Float64() < 0.2 {
			crop = "milho"
		}
		f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 8, crop: crop, cloudScale: 1})
		for _, s := range contract.Assessed() {
			sow, _ := f.trueSowing(s)
			sum, n := 0.0, 0
			for _, c := range f.cells {
				var v []float64
				for _, o := range c {
					if d := o.Date; !d.Before(sow.AddDate(0, 0, -30)) && d.Before(sow) && finite(o.NDVI) && finite(o.NDTI) && o.NDVI < p.MaxNDVI {
						v = append(v, o.NDTI)
					}
				}
				if len(v) > 0 {
					sort.Float64s(v)
					sum += num.Median(v)
					n++
				}
			}
			if n > 0 {
				xs = append(xs, f.sc.StrawPct(sow.AddDate(0, 0, -30), sow)/100)
				ys = append(ys, sum/float64(n))
			}
		}
	}
	mx, _ := meanSD(xs)
	my, _ := meanSD(ys)
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	b := sxy / sxx
	a := my - b*mx
	t.Logf("%d seasons: NDTI = %.4f + %.4f × cover → bare-soil NDTI %.3f, full-straw NDTI %.3f (pheno spectra: soil %.3f, straw %.3f)",
		len(xs), a, b, a, a+b, 0.0526, 0.2414)
}
