package coverage

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/spectral"
)

// campaignReading is one clear reading of a field campaign: the field's
// measured residue cover (0..1), the reading's raw NDTI and its per-reading
// straw fraction (UnmixReadings).
type campaignReading struct{ cover, ndti, straw float64 }

// uniform draws from [lo, hi).
func uniform(rng *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }

// fromIndices returns the reflectance pair (a, b) with a+b = sum and
// (b−a)/(a+b) = index: red and NIR of an NDVI, SWIR2 and SWIR1 of an NDTI.
func fromIndices(sum, index float64) (a, b float64) {
	return sum * (1 - index) / 2, sum * (1 + index) / 2
}

// campaignSurfaces draws one field's dry residue, soil and green canopy as
// reflectance spectra, independently of spectral's reference set, from the
// literature's ranges for dry surfaces at planting:
//   - dry crop residue (soybean, maize, wheat, millet, fresh to weathered):
//     NDVI 0.12–0.35, NDTI 0.15–0.32, red+NIR 0.35–0.70, SWIR1+SWIR2
//     0.45–0.85 (Daughtry et al. 2005, 2006; Quemada & Daughtry 2016;
//     van Deventer et al. 1997; Zheng et al. 2012 for the NDTI span);
//   - bare soils, dark clayey to bright sandy: NDVI 0.05–0.25, NDTI
//     −0.02–0.10, red+NIR 0.15–0.60, SWIR1+SWIR2 0.25–0.90 (same sources:
//     soils' SWIR1 and SWIR2 nearly equal, NDTI near 0);
//   - green canopy: NDVI 0.75–0.90, NDTI 0.30–0.45, red+NIR 0.40–0.55,
//     SWIR1+SWIR2 0.25–0.40.
//
// The straw NDTI span is issue 17's; the NDVI and brightness ranges are
// typical values of the cited literature as the team recalls them (not
// checked against the papers offline). The draws are uniform and
// independent (no correlation between a residue's NDVI and its NDTI is
// assumed).
func campaignSurfaces(rng *rand.Rand) (residue, soil, green spectral.Spectrum) {
	draw := func(v0, v1, t0, t1, vn0, vn1, sw0, sw1 float64) spectral.Spectrum {
		var s spectral.Spectrum
		s.Red, s.NIR = fromIndices(uniform(rng, vn0, vn1), uniform(rng, v0, v1))
		s.SWIR2, s.SWIR1 = fromIndices(uniform(rng, sw0, sw1), uniform(rng, t0, t1))
		return s
	}
	residue = draw(0.12, 0.35, 0.15, 0.32, 0.35, 0.70, 0.45, 0.85)
	soil = draw(0.05, 0.25, -0.02, 0.10, 0.15, 0.60, 0.25, 0.90)
	green = draw(0.75, 0.90, 0.30, 0.45, 0.40, 0.55, 0.25, 0.40)
	return residue, soil, green
}

// fieldCampaign simulates a field campaign at planting: n fields, each
// with its residue cover measured on the ground (uniform 0–100 %), its own
// residue, soil and green spectra (campaignSurfaces), a green share of
// the ground uniform in 0..maxGreen, and one to three clear Sentinel-2-like readings in the
// ten days before planting (reflectance noise 0.006 per band plus a 2 %
// multiplicative term, as sim/pheno). Each field is a talhão of one cell
// read through UnmixReadings with default Params, as `manejo analyse`
// does: with so few readings neither the soil fit nor the straw envelope
// applies, so the reference endmembers are the ones read with (the
// documented fallback).
func fieldCampaign(seed uint64, n int, maxGreen float64, newU func(Params) (spectral.Unmixer, bool)) []campaignReading {
	rng := rand.New(rand.NewPCG(seed, 17))
	plant := day("2025-10-20")
	var out []campaignReading
	for range n {
		residue, soil, green := campaignSurfaces(rng)
		c, g := rng.Float64(), uniform(rng, 0, maxGreen)
		fr := [3]float64{g, c * (1 - g), (1 - c) * (1 - g)}
		var cell []Obs
		for k := range 1 + rng.IntN(3) {
			band := func(gv, rv, sv float64) float64 {
				v := fr[0]*gv + fr[1]*rv + fr[2]*sv
				return math.Max(0.001, v*(1+0.02*rng.NormFloat64())+0.006*rng.NormFloat64())
			}
			// one multiplicative term per reading, as sim/pheno
			s := spectral.Spectrum{
				Red:   band(green.Red, residue.Red, soil.Red),
				NIR:   band(green.NIR, residue.NIR, soil.NIR),
				SWIR1: band(green.SWIR1, residue.SWIR1, soil.SWIR1),
				SWIR2: band(green.SWIR2, residue.SWIR2, soil.SWIR2),
			}
			e := s.Endmember()
			cell = append(cell, Obs{Date: plant.AddDate(0, 0, -10+3*k), NDVI: e.NDVI, NDTI: e.NDTI,
				Red: s.Red, NIR: s.NIR, SWIR1: s.SWIR1, SWIR2: s.SWIR2})
		}
		f := unmixReadingsWith([][]Obs{cell}, Params{}, newU)
		for j, o := range cell {
			out = append(out, campaignReading{cover: c, ndti: o.NDTI, straw: f[0][j].Straw})
		}
	}
	return out
}

// campaignRanks returns Spearman(per-reading straw, measured cover) and
// Spearman(raw NDTI, measured cover) over the readings.
func campaignRanks(t *testing.T, rs []campaignReading) (straw, ndti float64) {
	var c, n, s []float64
	for _, r := range rs {
		if !finite(r.straw) {
			t.Fatalf("a campaign reading could not be unmixed: %+v", r)
		}
		c, n, s = append(c, r.cover), append(n, r.ndti), append(s, r.straw)
	}
	return spearman(s, c), spearman(n, c)
}

// TestFieldCampaignRanking is the check the real ground truth of issue 17
// suggests (there, on field-measured residue cover with Sentinel-2
// readings, the per-reading straw ranked cover worse than raw NDTI:
// Spearman 0.46 against 0.56). In a world whose dry residues and soils
// vary in NDVI as real ones do (fieldCampaign, 0–3 % green), the unmixing
// with the reference straw–soil line (spectral.New) reads that NDVI
// variation as green canopy and ranks cover worse than raw NDTI, as the
// real data did. The product reads such a field — one to three readings,
// too few to know its dry surfaces — on the dry line at NDVI 0.35
// (fewReadingsDryNDVI, the top of dry residues' NDVI): below it the straw
// is a monotone function of NDTI, so it must rank measured cover as raw
// NDTI does, to within the few readings above 0.35 (0.005), and better
// than the straw–soil line. No better ranking than NDTI's is possible from
// one reading without green. With weeds (0–20 % green) the figures are
// logged: the green above 0.35 is taken out, the weeds below it cannot be
// told from a bright residue, and the straw ranks a little below raw NDTI
// (docs/coverage.md).
func TestFieldCampaignRanking(t *testing.T) {
	const seed, fields = 2017, 400
	for _, w := range []struct {
		name     string
		maxGreen float64
	}{{"dry (0–3 % green)", 0.03}, {"weedy (0–20 % green)", 0.20}} {
		sDry, sNDTI := campaignRanks(t, fieldCampaign(seed, fields, w.maxGreen, newUnmixer))
		sPlain, _ := campaignRanks(t, fieldCampaign(seed, fields, w.maxGreen, plainUnmixer))
		t.Logf("field campaign %s, seed %d, %d fields: Spearman with measured cover: raw NDTI %.3f, straw (as read: dry line at NDVI 0.35) %.3f, straw (straw–soil line, spectral.New) %.3f",
			w.name, seed, fields, sNDTI, sDry, sPlain)
		if w.maxGreen > 0.05 {
			continue
		}
		if !(sPlain < sNDTI) {
			t.Errorf("%s: the campaign world no longer reproduces the real finding: straw–soil-line straw %.3f ≥ raw NDTI %.3f", w.name, sPlain, sNDTI)
		}
		if !(sDry > sPlain) {
			t.Errorf("%s: the dry line ranks measured cover no better than the straw–soil line: %.3f ≤ %.3f", w.name, sDry, sPlain)
		}
		if sDry < sNDTI-0.005 {
			t.Errorf("%s: one reading's straw ranks measured cover below raw NDTI: %.3f < %.3f", w.name, sDry, sNDTI)
		}
	}
}

// plainUnmixer is newUnmixer before the dry line: straw and soil on the
// reference straw–soil line (spectral.New).
func plainUnmixer(p Params) (spectral.Unmixer, bool) {
	return spectral.New(p.Green, p.Straw, p.Soil)
}
