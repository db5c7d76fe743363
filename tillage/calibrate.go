package tillage

import (
	"math"

	"github.com/manejo/manejo/spectral"
)

// calibMaxNDVI and calibMaxObs select the readings of the soil calibration:
// those with NDVI below 0.5 (mostly soil and straw), at most 4 000 of them
// (an even stride), as coverage selects its own.
const (
	calibMaxNDVI = 0.5
	calibMaxObs  = 4000
)

// Calibrate returns p with its Soil replaced by the talhão's own soil,
// fitted from the reflectances of its interior cells' readings
// (spectral.FieldSoil, the calibration coverage reads straw cover with),
// when p's Soil is the reference one and enough readings carry all four
// reflectances; p unchanged otherwise. Border cells are left out: a
// headland revolved alone (IN 2.3 III) is not the talhão's soil.
func Calibrate(cells []Cell, p Params) Params {
	if p.Soil != spectral.Soil {
		return p
	}
	var rs []spectral.Spectrum
	for _, c := range cells {
		if c.Border {
			continue
		}
		for _, o := range c.Obs {
			s := spectral.Spectrum{Red: o.Red, NIR: o.NIR, SWIR1: o.SWIR1, SWIR2: o.SWIR2}
			if !math.IsNaN(o.NDVI) && o.NDVI < calibMaxNDVI && s.Valid() {
				rs = append(rs, s)
			}
		}
	}
	if stride := (len(rs) + calibMaxObs - 1) / calibMaxObs; stride > 1 {
		k := 0
		for i := 0; i < len(rs); i += stride {
			rs[k] = rs[i]
			k++
		}
		rs = rs[:k]
	}
	if f, ok := spectral.FieldSoil(rs); ok {
		p.Soil = f.Soil.Endmember()
	}
	return p
}
