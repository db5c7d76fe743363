package spectral

import (
	"math"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
)

func member(r pheno.Reflectance) Endmember {
	return Endmember{NDVI: r.NDVI(), NDTI: r.NDTI(), VNIR: r.Red + r.NIR, SWIR: r.SWIR1 + r.SWIR2}
}

// Mixing the pheno spectra and unmixing their indices gives the fractions
// back exactly: the index-space system is the reflectance mixing, not an
// approximation of it.
func TestFractionsRecoverMixtures(t *testing.T) {
	g, s, b := pheno.GreenEndmember, pheno.StrawEndmember, pheno.SoilEndmember
	u, ok := New(member(g), member(s), member(b))
	if !ok {
		t.Fatal("pheno endmembers rejected")
	}
	for _, f := range [][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.2, 0.5, 0.3}, {0.05, 0.15, 0.8}, {0.6, 0.1, 0.3}} {
		mix := pheno.Reflectance{
			Red:   f[0]*g.Red + f[1]*s.Red + f[2]*b.Red,
			NIR:   f[0]*g.NIR + f[1]*s.NIR + f[2]*b.NIR,
			SWIR1: f[0]*g.SWIR1 + f[1]*s.SWIR1 + f[2]*b.SWIR1,
			SWIR2: f[0]*g.SWIR2 + f[1]*s.SWIR2 + f[2]*b.SWIR2,
		}
		gg, ss, bb := u.Fractions(mix.NDVI(), mix.NDTI())
		if math.Abs(gg-f[0]) > 1e-9 || math.Abs(ss-f[1]) > 1e-9 || math.Abs(bb-f[2]) > 1e-9 {
			t.Errorf("Fractions(mix %v) = %.6f %.6f %.6f", f, gg, ss, bb)
		}
	}
}

func TestNewRejectsBadEndmembers(t *testing.T) {
	a := Endmember{NDVI: 0.8, NDTI: 0.3, VNIR: 0.5, SWIR: 0.3}
	b := Endmember{NDVI: 0.2, NDTI: 0.2, VNIR: 0.4, SWIR: 0.6}
	for name, c := range map[string]Endmember{
		"collinear": {NDVI: 0.5, NDTI: 0.25, VNIR: 0.4, SWIR: 0.5},
		"dark":      {NDVI: 0.1, NDTI: 0.05, VNIR: 0, SWIR: 0.5},
		"nan index": {NDVI: math.NaN(), NDTI: 0.05, VNIR: 0.3, SWIR: 0.5},
	} {
		if _, ok := New(a, b, c); ok {
			t.Errorf("%s third endmember accepted", name)
		}
	}
}
