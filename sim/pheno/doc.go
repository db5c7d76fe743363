// Package pheno is a deterministic model of the surface of a Brazilian grain
// field over time, with its ground truth: crop cycles, harvests, cover-crop
// desiccation, straw decomposition and soil tillage.
//
// It is shared by the synthetic archive (internal/synth) and by the accuracy
// harnesses of tillage and coverage, so that every stage is tested against the
// same crops.
//
// The surface of a pixel on a day is a linear mixture of three endmembers —
// green vegetation, dry crop residue (straw, standing or on the ground) and
// bare soil (a red oxisol, Latossolo Vermelho) — weighted by fractions that a
// daily simulation derives from the field's calendar:
//
//   - a crop's canopy cover rises logistically after emergence, stays green
//     until senescence, then dries (standing dry biomass is straw-like);
//   - harvest or desiccation turns the canopy into residue on the ground,
//     which decomposes exponentially with a half-life that depends on the crop
//     (soybean residue fast, maize and brachiaria slow) and slows down in the
//     dry season, when soil moisture limits microbial decomposition;
//   - tillage buries most of the residue (ploughing and disc harrowing more
//     than chiselling or subsoiling) and exposes the soil until the next crop.
//
// Endmember spectra are typical Sentinel-2/Landsat surface reflectances:
// green canopy NDVI ≈ 0.86 and NDTI ≈ 0.37, dry straw NDVI ≈ 0.2 and NDTI ≈
// 0.24, bare oxisol NDVI ≈ 0.15 and NDTI ≈ 0.05 (Daughtry et al. 2005, van
// Deventer et al. 1997, Zheng et al. 2012 for the residue/soil contrast in
// SWIR1/SWIR2). Those are the reference world's; Options.Spectra =
// SpectraVaried draws a harder world that shares none of them (world.go). Everything is pure and deterministic for a given *rand.Rand
// (math/rand/v2).
package pheno
