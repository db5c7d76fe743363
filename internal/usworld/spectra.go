package usworld

import (
	"math"
	"math/rand/v2"
)

// spec is a surface reflectance in the four bands the table carries:
// red, NIR, SWIR1 (1.6 µm), SWIR2 (2.2 µm).
type spec [4]float64

func (s spec) scale(k spec) spec {
	return spec{s[0] * k[0], s[1] * k[1], s[2] * k[2], s[3] * k[3]}
}

func mix(a, b spec, fb float64) spec {
	var o spec
	for i := range o {
		o[i] = (1-fb)*a[i] + fb*b[i]
	}
	return o
}

func ndti(s spec) float64 { return (s[2] - s[3]) / (s[2] + s[3]) }

// drawSoil draws a dry Corn Belt soil (Mollisols and Alfisols, dark silt
// loams). Daughtry et al. 2005 (Agron. J. 97:864) and Daughtry & Hunt 2008
// (Remote Sens. Environ. 112:1647) report dry soils' NDTI of Landsat TM
// bands about 0.0–0.12 and residues' 0.15–0.30, the gap narrowing when wet;
// Serbin et al. 2009 (SSSAJ 73:1545) the spread across US soils. Dark
// Midwest soils: red 0.08–0.16, NIR 1.25–1.6× red, SWIR1 0.18–0.32 and
// SWIR2 0.78–0.92 of SWIR1 (NDTI 0.04–0.12).
func drawSoil(rng *rand.Rand) spec {
	red := uniform(rng, 0.08, 0.16)
	s1 := uniform(rng, 0.18, 0.32)
	return spec{red, red * uniform(rng, 1.25, 1.6), s1, s1 * uniform(rng, 0.78, 0.92)}
}

// drawResidue draws fresh maize (or soybean) stover after harvest: brighter
// than the soil in every band, with the cellulose–lignin absorption near
// 2.1 µm lowering SWIR2 (Daughtry 2001, Agron. J. 93:125; Daughtry et al.
// 2005): red 0.16–0.26, NIR 1.3–1.5× red (NDVI ≈ 0.13–0.2), SWIR1
// 0.36–0.46, SWIR2 0.64–0.76 of SWIR1 (NDTI 0.14–0.22; van Deventer et
// al. 1997, PE&RS 63:87, found NDTI separating residue classes on TM).
func drawResidue(rng *rand.Rand, wide bool) spec {
	red := uniform(rng, 0.16, 0.26)
	s1 := uniform(rng, 0.36, 0.46)
	lo := 0.64
	if wide {
		lo = 0.54 // Config.WideContrast
	}
	return spec{red, red * uniform(rng, 1.3, 1.5), s1, s1 * uniform(rng, lo, 0.76)}
}

// green is a winter-annual weed or cereal-rye canopy (a leaf spectrum of the
// kind in Daughtry et al. 2005's mixtures; its high NDTI is why green is
// kept apart from residue).
var green = spec{0.04, 0.40, 0.22, 0.10}

// drawSnow draws snow: bright in the visible and NIR, dark in the SWIR,
// SWIR2 below SWIR1 (ice absorption; Dozier, Green, Nolin & Painter 2009,
// Remote Sens. Environ. 113:S25; Painter et al. 2009): red 0.6–0.9, NIR 0.9–1.0× red,
// SWIR1 0.08–0.22, SWIR2 0.45–0.8 of SWIR1 (NDTI ≈ 0.1–0.4, NDVI ≈ 0).
func drawSnow(rng *rand.Rand) spec {
	red := uniform(rng, 0.6, 0.9)
	s1 := uniform(rng, 0.08, 0.22)
	return spec{red, red * uniform(rng, 0.9, 1.0), s1, s1 * uniform(rng, 0.45, 0.8)}
}

// Moisture darkens soil and residue, more in the SWIR and most at 2.2 µm,
// where water absorbs more than at 1.6 µm (Lobell & Asner 2002, SSSAJ
// 66:722: soil reflectance falls with moisture, SWIR most; Daughtry & Hunt
// 2008 and Quemada & Daughtry 2016, Remote Sens. 8:660: wetting raises the
// NDTI of soils and lowers the residue–soil contrast). The factor of each
// band at full wetness w = 1 (a saturated surface); w is 0..1. The factors
// are this world's assumption, not figures from those papers: they darken
// SWIR2 more than SWIR1, so a wet surface's NDTI rises — residue's too,
// the opposite of the team's own worlds and of the detector's wetting
// response, which have wet straw lose NDTI (review s10 F10).
var (
	wetSoil    = spec{0.30, 0.30, 0.42, 0.52}
	wetResidue = spec{0.12, 0.12, 0.26, 0.33}
)

func wetten(s, k spec, w float64) spec {
	return spec{s[0] * (1 - k[0]*w), s[1] * (1 - k[1]*w), s[2] * (1 - k[2]*w), s[3] * (1 - k[3]*w)}
}

// agedResidue is the fresh stover's spectrum after a winter's weathering
// (a 0..1): darker, its cellulose feature shallower, so its NDTI falls by
// ≈ 0.02–0.05 (Daughtry et al. 2010, Remote Sens. 2:416: CAI of residue
// decreased as it decomposed; Nagler et al. 2000).
func agedResidue(fresh spec, a float64) spec {
	return spec{fresh[0] * (1 - 0.10*a), fresh[1] * (1 - 0.12*a), fresh[2] * (1 - 0.15*a), fresh[3] * (1 - 0.06*a)}
}

// thinCloud is a cloud's top-of-canopy contribution left in a reading
// flagged clear: a water cloud darker at 2.2 than at 1.6 µm, an ice cloud
// nearly grey (swirRatio 0.7–1.0).
func thinCloud(s spec, tau, swirRatio float64) spec {
	c := spec{0.45, 0.45, 0.40, 0.40 * swirRatio}
	return mix(s, c, tau)
}

// shadow darkens a reading in an unflagged cloud shadow (direct light cut
// to 25–60 %, a little diffuse skylight added, more in the red).
func shadow(s spec, k float64) spec {
	return spec{s[0]*k + 0.01, s[1]*k + 0.005, s[2]*k + 0.003, s[3]*k + 0.002}
}

func clip(s spec) spec {
	for i := range s {
		s[i] = math.Max(0.001, math.Min(1, s[i]))
	}
	return s
}
