// Package synth writes a synthetic Sentinel-2 L2A archive with ground truth,
// for `manejo synth`, `make demo` and the tests of every stage.
//
// Generate lays out a handful of talhões (designed to exercise each rule:
// both cell-size classes, an L-shaped talhão, a MODIS-eligible one, slopes on
// both sides of 3 %, headland-only tillage that must not count, IN 2.3) on a
// small scene near Sinop (MT), gives each one a crop history from
// sim/pheno, and renders, every RevisitDays, the scene as real
// Cloud-Optimized GeoTIFFs with the structure of Sentinel-2 L2A on Earth
// Search: red and nir at 10 m, swir16, swir22 and scl at 20 m, UInt16 DN
// with nodata 0 (SCL Byte), in the scene's UTM zone. Clouds, cirrus and
// shadows follow the Mato Grosso rainy season and are flagged in SCL with
// the real class codes; a few thin cloud edges and haze patches are left
// unflagged on purpose. Processing baselines before and after 04.00 are
// mixed, with and without the +1000 DN offset in the data.
//
// Output directory layout:
//
//	catalog.json                  STAC ItemCollection (hrefs relative to it)
//	sentinel-2-l2a/<item>/B04.tif red, 10 m     B08.tif nir, 10 m
//	sentinel-2-l2a/<item>/B11.tif swir16, 20 m  B12.tif swir22, 20 m
//	sentinel-2-l2a/<item>/SCL.tif scene classification, 20 m
//	dem.tif                       DEM COG, EPSG:4326, 1 arc-second, Float32 metres
//	talhoes.geojson               the talhões (RFC 7946)
//	sowing.csv                    declared sowing dates for some seasons
//	truth.json                    ground truth (see Truth)
//
// Everything is deterministic for a seed: the same Options give
// byte-identical files. The package does I/O through GDAL (godal), imports
// sim/pheno for the surface model and internal/num for rounding, and is
// imported by no production package.
package synth
