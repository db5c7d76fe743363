package coverage

import (
	"math"
	"testing"

	"github.com/manejo/manejo/spectral"
	"github.com/manejo/manejo/zarc"
)

// soilField returns nCells cells read every 5 days over three agricultural
// years, every reading 40 % straw and 60 % of a soil darker
// (×0.93) and with more SWIR1 (×1.03, NDTI 0.066 against the default
// 0.053) than spectral.SoilSpectrum; with or without the reflectances.
func soilField(withBands bool) [][]Obs {
	d := spectral.SoilSpectrum
	soil := spectral.Spectrum{Red: d.Red * 0.93, NIR: d.NIR * 0.93, SWIR1: d.SWIR1 * 0.93 * 1.03, SWIR2: d.SWIR2 * 0.93}
	s := spectral.StrawSpectrum
	r := spectral.Spectrum{
		Red:   0.4*s.Red + 0.6*soil.Red,
		NIR:   0.4*s.NIR + 0.6*soil.NIR,
		SWIR1: 0.4*s.SWIR1 + 0.6*soil.SWIR1,
		SWIR2: 0.4*s.SWIR2 + 0.6*soil.SWIR2,
	}
	e := r.Endmember()
	var cell []Obs
	for t := day("2023-07-01"); t.Before(day("2026-07-01")); t = t.AddDate(0, 0, 5) {
		o := Obs{Date: t, NDVI: e.NDVI, NDTI: e.NDTI}
		if withBands {
			o.Red, o.NIR, o.SWIR1, o.SWIR2 = r.Red, r.NIR, r.SWIR1, r.SWIR2
		}
		cell = append(cell, o)
	}
	return [][]Obs{cell, cell}
}

// With the reflectances, Assess fits the talhão's soil and reads the 40 %
// straw; without them (or with the fit turned off, or the soil set by
// BareNDTI) it unmixes with the default soil and misreads it.
func TestAssessSoilFit(t *testing.T) {
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	declared := map[string]Declared{}
	for _, s := range contract.Assessed() {
		declared[s.Label] = Declared{Season: s.Label, Date: s.Start.AddDate(0, 3, 10)}
	}
	for _, tc := range []struct {
		name      string
		bands     bool
		p         Params
		wantFit   bool
		tolerance float64
	}{
		{"reflectances", true, Params{}, true, 0.2},
		{"indices only", false, Params{}, false, 0},
		{"fit off", true, Params{NoSoilFit: true}, false, 0},
		{"soil NDTI set", true, Params{BareNDTI: spectral.Soil.NDTI}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Assess(soilField(tc.bands), contract, declared, zarc.Soja, tc.p)
			if !c.OK {
				t.Fatalf("C missing: %s", c.Reason)
			}
			err := math.Abs(c.Pct - 40)
			if tc.wantFit && err > tc.tolerance {
				t.Errorf("C = %.2f %%, want 40 ± %.1f", c.Pct, tc.tolerance)
			}
			if !tc.wantFit && err < 3 {
				t.Errorf("C = %.2f %%: the default soil should misread the darker, SWIR1-brighter soil by ≥ 3 pp", c.Pct)
			}
		})
	}
}
