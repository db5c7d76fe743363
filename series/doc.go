// Package series turns a STAC catalog of Cloud-Optimized GeoTIFF scenes into
// per-cell NDVI and NDTI time series (IN SPA/MAPA 2/2025, items 6.4 and 6.5).
//
// Inputs: a Catalog (STAC ItemCollection JSON, a directory of Item JSON files
// or newline-delimited Items, local, s3:// or https://) and the grids built by
// package grid (cell centres in lon/lat). Output: one Obs per cell, scene date
// and collection, with NDVI and NDTI as float32 (NaN = no value) and the
// reason a value is missing (a MaskReason: cloud, shadow, nodata, saturated,
// zero-denominator, outside-scene...), plus Stats: scenes read and skipped
// by SkipReason, problems naming the item and asset, and per-talhão revisit
// gaps (IN 6.5: at most 16 days). The string values of both reason types
// are what reports and the observations dataset print.
//
// Radiometry (DESIGN.md "Radiometry facts"): reflectance = DN × scale +
// offset. The scale and offset come from the asset's STAC raster:bands when
// given there, else from the sensor Profile. Sentinel-2 L2A items whose
// s2:processing_baseline is 04.00 or later get the −1000 DN offset
// (offset −0.1 at scale 0.0001) unless raster:bands carries an offset or the
// item says earthsearch:boa_offset_applied: true. GDAL scale/offset metadata
// inside the files is ignored: the catalog and the profile are the one
// source of truth.
//
// Reading (see Sample): work is grouped by scene; each asset is opened once
// per batch; only the blocks (or one window, when that decodes no more)
// holding cell centres are read; the mask is read first and reflectance is
// read only for cells the mask leaves clear; scenes run on a bounded pool of
// goroutines, each with its own godal.Dataset handles. A read that failed
// may be worth another attempt: TransientReads tells which failures were
// transient (by the GDAL/curl error, or a remote file GDAL could not open
// although it exists) and which cached paths GDAL must forget.
//
// Of this module, series may import zarc, grid and storage
// (docs/architecture.md); it reads rasters through godal.
package series
