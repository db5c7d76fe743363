// Package report writes the analyst report of a finished manejo output: one
// self-contained HTML file (no network requests, plots inline as SVG) with a
// sortable summary table of every talhão and, per talhão, a map of its cells
// coloured by pre-sowing straw cover, the NDVI and NDTI series (median over
// cells with the inter-quartile band) with tillage events, crop cycles,
// sowing dates and pre-sowing windows marked, and the slope figures.
//
// The report draws what the run computed and recomputes nothing: a cell's
// colour is the mean over seasons of its cover_pct in cell_cover.parquet
// (the same computation, parameters and talhão soil fit as the talhão's C),
// the figures come from indicators, seasons, cycles and events.
//
// Observations are streamed: the report never holds more than one talhão's
// observations per part file, so it scales to thousands of talhões.
//
// Inputs: the datasets of an output folder as an fs.FS, read through
// export.ReadDataset and export.ScanFS, and its run manifest (run.json or the
// shards' run/part-*.json, through export.ReadManifest). The CLI opens a
// local or s3:// folder with storage.FS, which reads by range: nothing is
// downloaded whole.
package report
