package spectral

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/sim/pheno"
)

func spectrum(r pheno.Reflectance) Spectrum {
	return Spectrum{Red: r.Red, NIR: r.NIR, SWIR1: r.SWIR1, SWIR2: r.SWIR2}
}

func mix(f [3]float64, e [3]Spectrum, k float64) Spectrum {
	var out Spectrum
	out.Red = k * (f[0]*e[0].Red + f[1]*e[1].Red + f[2]*e[2].Red)
	out.NIR = k * (f[0]*e[0].NIR + f[1]*e[1].NIR + f[2]*e[2].NIR)
	out.SWIR1 = k * (f[0]*e[0].SWIR1 + f[1]*e[1].SWIR1 + f[2]*e[2].SWIR1)
	out.SWIR2 = k * (f[0]*e[0].SWIR2 + f[1]*e[1].SWIR2 + f[2]*e[2].SWIR2)
	return out
}

var hazeP, noiseS = 0.03, 0.006

// Coefficients recovers the fractions of an exact mixture times its overall
// brightness, with no misfit.
func TestCoefficientsRecoverScaledMixtures(t *testing.T) {
	t.Parallel()
	e := [3]Spectrum{spectrum(pheno.GreenEndmember), spectrum(pheno.StrawEndmember), spectrum(pheno.SoilEndmember)}
	for _, tc := range []struct {
		f [3]float64
		k float64
	}{{[3]float64{0, 0, 1}, 1}, {[3]float64{0.2, 0.5, 0.3}, 1.05}, {[3]float64{0.05, 0.15, 0.8}, 0.9}, {[3]float64{0.6, 0.1, 0.3}, 1}} {
		t.Run("", func(t *testing.T) {
			a, b, c, res := Coefficients(e[0], e[1], e[2], mix(tc.f, e, tc.k))
			if !testkit.Near(a, tc.k*tc.f[0], 1e-9) || !testkit.Near(b, tc.k*tc.f[1], 1e-9) || !testkit.Near(c, tc.k*tc.f[2], 1e-9) || !testkit.Near(res, 0, 1e-12) {
				t.Errorf("Coefficients(%v × %v) = %.6f %.6f %.6f (misfit %.2g)", tc.f, tc.k, a, b, c, res)
			}
		})
	}
	if a, _, _, _ := Coefficients(e[0], e[1], e[2], Spectrum{Red: math.NaN(), NIR: 0.3, SWIR1: 0.3, SWIR2: 0.2}); !math.IsNaN(a) {
		t.Errorf("NaN band gave %v", a)
	}
	if a, _, _, _ := Coefficients(e[0], e[0], e[2], e[2]); !math.IsNaN(a) {
		t.Errorf("dependent endmembers gave %v", a)
	}
}

func TestSpectrumValidAndEndmember(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		s    Spectrum
		want bool
	}{
		"soil":     {spectrum(pheno.SoilEndmember), true},
		"zero":     {Spectrum{Red: 0.1, NIR: 0.2, SWIR1: 0, SWIR2: 0.2}, false},
		"nan":      {Spectrum{Red: 0.1, NIR: math.NaN(), SWIR1: 0.3, SWIR2: 0.2}, false},
		"infinite": {Spectrum{Red: 0.1, NIR: 0.2, SWIR1: math.Inf(1), SWIR2: 0.2}, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tc.s.Valid(); got != tc.want {
				t.Errorf("Valid() = %v, want %v", got, tc.want)
			}
		})
	}
	s := pheno.SoilEndmember
	e := spectrum(s).Endmember()
	if !testkit.Near(e.NDVI, s.NDVI(), 1e-12) || !testkit.Near(e.NDTI, s.NDTI(), 1e-12) || !testkit.Near(e.VNIR, 0.33, 1e-12) || !testkit.Near(e.SWIR, 0.57, 1e-12) {
		t.Errorf("Endmember() = %+v", e)
	}
}

// FitSoil recovers a field's soil (brightness 0.92, SWIR1 +2 %) from noisy
// mixtures of the pheno spectra, with 3 % of readings hazed, starting from
// the default soil.
func TestFitSoilRecoversFieldSoil(t *testing.T) {
	t.Parallel()
	g, s, b := spectrum(pheno.GreenEndmember), spectrum(pheno.StrawEndmember), spectrum(pheno.SoilEndmember)
	for _, tc := range []struct{ k, f float64 }{{0.92, 1.02}, {1.08, 0.975}, {1, 1}} {
		t.Run("", func(t *testing.T) {
			field := Spectrum{b.Red * tc.k, b.NIR * tc.k, b.SWIR1 * tc.k * tc.f, b.SWIR2 * tc.k}
			rng := rand.New(rand.NewPCG(1, 2))
			var rs []Spectrum
			for range 400 {
				gr := 0.3 * rng.Float64()
				st := (1 - gr) * rng.Float64()
				r := mix([3]float64{gr, st, 1 - gr - st}, [3]Spectrum{g, s, field}, 1+0.02*rng.NormFloat64())
				r.Red += noiseS * rng.NormFloat64()
				r.NIR += noiseS * rng.NormFloat64()
				r.SWIR1 += noiseS * rng.NormFloat64()
				r.SWIR2 += noiseS * rng.NormFloat64()
				if rng.Float64() < hazeP { // haze the mask missed
					r = Spectrum{0.5*r.Red + 0.2, 0.5*r.NIR + 0.22, 0.5*r.SWIR1 + 0.17, 0.5*r.SWIR2 + 0.13}
				}
				rs = append(rs, r)
			}
			fit, ok := FitSoil(g, s, b, rs, 30)
			if !ok {
				t.Fatal("no fit")
			}
			if !testkit.Near(fit.Brightness, tc.k, 0.02) || !testkit.Near(fit.SWIR1, tc.f, 0.006) {
				t.Errorf("fit brightness %.4f SWIR1 %.4f, want %.2f %.3f", fit.Brightness, fit.SWIR1, tc.k, tc.f)
			}
			if got, want := fit.Soil.Endmember().NDTI, field.Endmember().NDTI; !testkit.Near(got, want, 0.003) {
				t.Errorf("soil NDTI %.4f, want %.4f", got, want)
			}
			if _, ok := FitSoil(g, s, b, rs[:20], 30); ok {
				t.Error("fit from 20 readings, want at least 30")
			}
		})
	}
}

// The misfit the soil search uses (projection on the span's normal) is
// Coefficients' resid.
func TestMisfitIsCoefficientsResid(t *testing.T) {
	t.Parallel()
	g, s, b := spectrum(pheno.GreenEndmember), spectrum(pheno.StrawEndmember), spectrum(pheno.SoilEndmember)
	n, ok := normal(g, s, b)
	if !ok {
		t.Fatal("pheno spectra dependent")
	}
	for _, r := range []Spectrum{{0.1, 0.2, 0.3, 0.25}, {0.3, 0.33, 0.3, 0.2}, mix([3]float64{0.2, 0.3, 0.5}, [3]Spectrum{g, s, b}, 1)} {
		_, _, _, want := Coefficients(g, s, b, r)
		if got := misfit(n, r); !testkit.Near(got, want, 1e-12) {
			t.Errorf("misfit(%v) = %.6g, Coefficients resid %.6g", r, got, want)
		}
	}
	if _, ok := normal(g, g, b); ok {
		t.Error("dependent spectra gave a normal")
	}
}
