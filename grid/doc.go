// Package grid reads talhões (field polygons), validates them, measures their
// geodesic area and divides each into regular quadrículas whose centres are
// the sampling points of every satellite series (IN SPA/MAPA 2/2025, item 6.2).
//
// It holds the types every stage shares: Field (a talhão), Cell (a
// quadrícula) and Grid. Inputs are GeoJSON (RFC 7946) or any OGR vector
// (GeoPackage, Shapefile, KML) reprojected to lon/lat; outputs are in lon/lat
// with areas in hectares on the WGS84 ellipsoid.
//
// Cell size follows item 6.2 III–IV: under 100 ha, cells of 1–5 ha; from
// 100 ha (100 ha exactly takes the larger class), 5–10 ha. MODIS eligibility
// follows item 6.4 I.
//
// May import: orb, godal (OGR and projections).
package grid
