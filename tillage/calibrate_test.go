package tillage

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/spectral"
)

// Calibrate reads the talhão's own soil from its interior cells'
// reflectances (the fit coverage reads straw cover with), leaves a soil the
// caller set alone, and ignores the border cells (IN 2.3 III: a headland is
// not the talhão).
func TestCalibrateFitsTheTalhaoSoil(t *testing.T) {
	g := &phenoGen{revisit: 5}
	rng := rand.New(rand.NewPCG(5, 6))
	fitted := 0
	for k := 0; k < 8; k++ {
		cells, _ := g.talhao(rng, false, false, 6, 3)
		so := g.last.Soil
		want := spectral.Spectrum{Red: so.Red, NIR: so.NIR, SWIR1: so.SWIR1, SWIR2: so.SWIR2}.Endmember().NDTI
		p := Calibrate(cells, DefaultParams())
		if p.Soil == spectral.Soil {
			continue
		}
		fitted++
		if math.Abs(p.Soil.NDTI-want) > 0.01 {
			t.Errorf("talhão %d: fitted soil NDTI %.4f, true %.4f", k, p.Soil.NDTI, want)
		}
		// Border cells carry no weight: replacing them changes nothing.
		alt := append([]Cell(nil), cells...)
		for i := range alt {
			if alt[i].Border {
				alt[i].Obs = nil
			}
		}
		if q := Calibrate(alt, DefaultParams()); q.Soil != p.Soil {
			t.Errorf("talhão %d: border cells moved the soil %+v -> %+v", k, p.Soil, q.Soil)
		}
	}
	if fitted < 6 {
		t.Errorf("soil fitted on %d of 8 reference-world talhões", fitted)
	}
	cells, _ := g.talhao(rng, false, false, 6, 3)
	set := DefaultParams()
	set.Soil.NDTI = 0.07
	if q := Calibrate(cells, set); q.Soil != set.Soil {
		t.Error("a soil set by the caller was replaced")
	}
	var bare []Cell
	for _, c := range cells {
		o := make([]Obs, len(c.Obs))
		for i, x := range c.Obs {
			o[i] = Obs{Date: x.Date, NDVI: x.NDVI, NDTI: x.NDTI}
		}
		bare = append(bare, Cell{ID: c.ID, Border: c.Border, Obs: o})
	}
	if q := Calibrate(bare, DefaultParams()); q.Soil != spectral.Soil {
		t.Error("readings without reflectances changed the soil")
	}
}
