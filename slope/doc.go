// Package slope computes the mean slope, in percent, of a talhão from a
// digital elevation model, and the contour-planting requirement that follows
// from it (IN SPA/MAPA 2/2025, items 3.2.1 I and 6.3).
//
// The gradient is Horn's 3×3 method, the one `gdaldem slope -p` uses. On a
// geographic DEM (NASADEM, SRTM and other 1 arc-second products in
// EPSG:4326) the pixel sizes in metres are taken at the latitude of every DEM
// row on the DEM's ellipsoid — the prime-vertical radius of curvature ν for
// east–west spacing (ν·cos φ·Δλ), the meridional radius M for north–south
// spacing (M·Δφ) — and each of the three rows of the Horn window uses its own
// east–west spacing, so a plane of known slope comes out exact at any
// latitude. Projected DEMs use their own linear unit.
//
// The slope of the talhão is the mean over the DEM pixels whose centre lies
// inside the talhão polygon; the median and 90th percentile are reported with
// it. Void pixels (nodata, outside the DEM, or next to a void, where Horn's
// window is incomplete) are left out and their share reported; a talhão with
// no valid pixel is an error naming it.
//
// Outputs, in Result: the unrounded mean (slope_mean_pct), ContourRequired =
// mean ≥ 3.0 % on the unrounded value (item 3.2.1 I), DeclividadeMedia = the
// mean rounded to an integer percent for SINM, and a warning when rounding
// moves the value across the 3 % line. The declared plantioContorno and
// terraceamento of the talhão are passed through.
//
// Resolution (item 6.3, "resolução espacial mínima de 30 metros, tais como
// NASADEM"): a geographic DEM whose pixel exceeds 1.05 arc-second, or a
// projected DEM whose pixel exceeds 31 m, is refused with ErrTooCoarse. The
// regulation names NASADEM (1″ ≈ 30.7–30.9 m) as compliant, so "30 m" is the
// nominal class of 1″ products, not a literal bound; see CheckResolution.
//
// The math (Horn, PixelSizeM, Rasterize, Summarize, NewResult,
// CheckResolution) is pure: slices in, values out, standard library, orb and
// internal/num (order statistics) only. GDAL I/O lives in dem.go (Open,
// DEM.Field, DEM.Fields, WriteCOG), which alone imports godal, grid (the
// talhões) and storage (GDAL initialisation and paths).
package slope
