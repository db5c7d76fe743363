package spectral

import (
	"math"
	"math/rand/v2"
	"testing"
)

func meanNDTI(f StrawFit) float64 {
	m := 0.0
	for i, w := range f.Weights {
		m += w * f.Spectra[i].Endmember().NDTI
	}
	return m
}

// The prior is centred on the reference straw with the given spread, and
// the dry-residue envelope only removes straws below it.
func TestPriorStrawAndEnvelope(t *testing.T) {
	p := PriorStraw(0.045)
	sum, v := 0.0, 0.0
	ref := Straw.NDTI
	for i, w := range p.Weights {
		sum += w
		d := p.Spectra[i].Endmember().NDTI - ref
		v += w * d * d
	}
	if math.Abs(sum-1) > 1e-9 || math.Abs(meanNDTI(p)-ref) > 0.005 || math.Abs(math.Sqrt(v)-0.045) > 0.005 {
		t.Errorf("prior: weights sum %.6f, mean NDTI %.4f (want %.4f), sd %.4f (want 0.045)", sum, meanNDTI(p), ref, math.Sqrt(v))
	}
	up := p.AtLeast(0.30, 0.015)
	if m := meanNDTI(up); m < 0.30 || m > 0.34 {
		t.Errorf("AtLeast(0.30): posterior mean NDTI %.4f, want 0.30–0.34", m)
	}
	if m := meanNDTI(p.AtLeast(0.10, 0.015)); math.Abs(m-meanNDTI(p)) > 0.002 {
		t.Errorf("AtLeast(0.10) moved the mean to %.4f: a bound far below the prior says nothing", m)
	}
	if got := p.AtLeast(0.9, 0.001); meanNDTI(got) != meanNDTI(p) {
		t.Error("an impossible bound must leave the belief unchanged")
	}
	if m := p.Mean().Endmember().NDTI; math.Abs(m-ref) > 0.01 {
		t.Errorf("Mean() NDTI %.4f, want ≈ %.4f", m, ref)
	}
}

func TestSoilFitAtEdge(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want bool
	}{{0.94, true}, {1.06, true}, {1.0, false}, {0.95, false}} {
		if got := (SoilFit{SWIR1: c.f}).AtEdge(); got != c.want {
			t.Errorf("AtEdge(%.2f) = %v", c.f, got)
		}
	}
}

// FitSoil's Misfit is the readings' noise when they are mixtures of the
// template spectra (≈ 0.6745 · σ / 2 for noise σ per band), and well above
// it when the field's straw lies outside the templates' span.
func TestSoilFitMisfit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const sigma = 0.006
	mix := func(straw Spectrum) []Spectrum {
		var rs []Spectrum
		for range 400 {
			g, s := 0.3*rng.Float64(), rng.Float64()
			s *= 1 - g
			b := 1 - g - s
			r := Spectrum{
				g*GreenSpectrum.Red + s*straw.Red + b*SoilSpectrum.Red + sigma*rng.NormFloat64(),
				g*GreenSpectrum.NIR + s*straw.NIR + b*SoilSpectrum.NIR + sigma*rng.NormFloat64(),
				g*GreenSpectrum.SWIR1 + s*straw.SWIR1 + b*SoilSpectrum.SWIR1 + sigma*rng.NormFloat64(),
				g*GreenSpectrum.SWIR2 + s*straw.SWIR2 + b*SoilSpectrum.SWIR2 + sigma*rng.NormFloat64(),
			}
			rs = append(rs, r)
		}
		return rs
	}
	f, ok := FitSoil(GreenSpectrum, StrawSpectrum, SoilSpectrum, mix(StrawSpectrum), 30)
	if want := 0.6745 * sigma / 2; !ok || math.Abs(f.Misfit-want) > 0.25*want {
		t.Errorf("template mixtures: misfit %.5f (ok %v), want ≈ %.5f", f.Misfit, ok, want)
	}
	other := StrawSpectrum
	other.Red *= 1.4 // a redder straw: out of the templates' span
	g, ok := FitSoil(GreenSpectrum, StrawSpectrum, SoilSpectrum, mix(other), 30)
	if !ok || g.Misfit < 2*f.Misfit {
		t.Errorf("foreign straw: misfit %.5f (ok %v), want well above the templates' %.5f", g.Misfit, ok, f.Misfit)
	}
}
