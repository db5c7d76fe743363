package tillage

import (
	"errors"
	"testing"
	"time"

	"github.com/manejo/manejo/spectral"
)

func TestParamsValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatalf("DefaultParams().Validate() = %v", err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*Params)
	}{
		{"K", func(p *Params) { p.K = 0 }},
		{"MinSigma", func(p *Params) { p.MinSigma = -1 }},
		{"PreObs", func(p *Params) { p.PreObs = 0 }},
		{"BareSoilMin", func(p *Params) { p.BareSoilMin = 1.5 }},
		{"ExposedMin", func(p *Params) { p.ExposedMin = 0.9 }},
		{"MinCellFraction", func(p *Params) { p.MinCellFraction = 0 }},
		{"collinear endmembers", func(p *Params) {
			p.Straw = spectral.Endmember{NDVI: 0.5, NDTI: 0.2, VNIR: 0.4, SWIR: 0.5}
			p.Soil.NDVI, p.Soil.NDTI = 0.2, 0.2
			p.Green.NDVI, p.Green.NDTI = 0.8, 0.2
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams()
			tc.mod(&p)
			if err := p.Validate(); !errors.Is(err, ErrParams) {
				t.Errorf("Validate() = %v, want ErrParams", err)
			}
			if DetectCell(series(time.Now(), 10, 0, func(int) [2]float64 { return mix(0, 0.5) }), p) != nil {
				t.Errorf("DetectCell with invalid params returned breaks")
			}
		})
	}
}
