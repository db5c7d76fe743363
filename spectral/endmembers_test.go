package spectral

import (
	"math"
	"testing"
)

// The endmembers are the spectra's indices: one set, not two that drift.
func TestEndmembersAreTheSpectra(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		e    Endmember
		s    Spectrum
	}{{"green", Green, GreenSpectrum}, {"straw", Straw, StrawSpectrum}, {"soil", Soil, SoilSpectrum}} {
		got := c.s.Endmember()
		if math.Abs(got.NDVI-c.e.NDVI) > 1e-12 || math.Abs(got.NDTI-c.e.NDTI) > 1e-12 ||
			math.Abs(got.VNIR-c.e.VNIR) > 1e-12 || math.Abs(got.SWIR-c.e.SWIR) > 1e-12 {
			t.Errorf("%s: endmember %+v, spectrum's %+v", c.name, c.e, got)
		}
	}
	if _, ok := New(Green, Straw, Soil); !ok {
		t.Error("the reference set cannot be unmixed")
	}
}
