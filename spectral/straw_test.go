package spectral

import (
	"math"
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
