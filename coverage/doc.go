// Package coverage reads indicator C of ZARC Níveis de Manejo: the straw
// cover of the soil before the sowing of the main crop, averaged over the
// three agricultural years before the contract year (IN SPA/MAPA 2/2025
// item 2.1 V and Tabela 1; Portaria SPA/MAPA 349/2026 items 6.7–6.7.2).
//
// It works in four steps, all pure functions over slices:
//
//   - Seasons: ParseSeason names the contract year ("2026/2027", in the one
//     grammar of zarc.ParseAgriYear), and Season.Assessed lists the three
//     agricultural years before it. The year boundary is a MonthDay
//     (default 07-01).
//   - Crop cycles and sowing: the cloud-masked NDVI series of the talhão
//     (median over its cells) is smoothed by a robust Whittaker smoother on a
//     daily grid; every green-up/peak/senescence becomes a Cycle, and the
//     main summer crop's sowing is its green-up date (a fraction of the
//     cycle's amplitude) minus a calibrated lag, constrained to the crop's
//     sowing window. Declared sowing dates (ReadSowingCSV) win over detected
//     ones. Sowing carries the ZARC decêndio (zarc.Decendio, Portaria
//     206/2026 item 3.3).
//   - Straw cover per cell: CellCover unmixes each clear reading around
//     the 30 days before sowing into green-canopy, straw and bare-soil
//     fractions (three endmembers, linear mixing of reflectances rewritten
//     in NDVI–NDTI space) and averages the straw fraction over the window's
//     days, so green weeds no longer read as straw and a tillage inside the
//     window weighs by the days it covers. The first version's estimators
//     (median, minimum after Zheng et al. 2012, or mean NDTI, mapped
//     linearly between bare-soil and full-straw NDTI) remain as
//     Params.Estimator.
//   - The declared residue: AssessHistory takes the talhão's crop history;
//     the residue of the crop that ended last before each sowing, and its
//     age, set the prior of that season's straw spectrum by published
//     decomposition rates (residue.go; without a history it is Assess).
//   - C and its level: Assess averages the cells of each season and the
//     three seasons; zarc.CLevel applies Tabela 1. A season that cannot be
//     read leaves C missing with its reason (IN 2.2: never guessed).
//
// Units: NDVI and NDTI are unitless (−1..1), covers are percent (0–100),
// Ratio is a 0..1 fraction, dates are UTC days (zarc.Day).
//
// The package is pure: besides the standard library it imports only
// spectral (the endmember set, unmixing and the soil fit) and zarc (crop,
// agricultural year, day, decêndio, levels): no files, GDAL or context.
package coverage
