// Package export writes and reads the datasets manejo produces for analysts
// (cells, observations, events, seasons, cycles, indicators, cell cover,
// classification) and the run manifest (run.json).
//
// Schemas live in one place, the row types of rows.go (CellRow, ObsRow,
// EventRow, SeasonRow, CycleRow, IndicatorRow, …): their struct tags give the
// Parquet column names and logical types (DATE, FLOAT, DOUBLE, INT32, UTF8,
// LIST), and their `unit`/`doc` tags generate the schema tables of
// docs/outputs.md (a test keeps them equal). The stage packages are not
// imported: the pipeline converts stage results into these rows.
//
// Files are zstd-compressed, sorted by field, cell and date, with row groups
// of at most 1 Mi rows, and carry no timestamp, so the same rows give the same
// bytes. cells.parquet is GeoParquet 1.1 (WKB polygons in OGC:CRS84, a bbox
// covering column). A sharded run writes each dataset as a folder of parts
// (PartName); DatasetFiles, ScanFS and ReadDataset read either form.
// Everything is written through io.Writer and read through io.ReaderAt or
// fs.FS, so a local folder and an S3 prefix (storage.FS) read alike; opening
// them is storage's job.
//
// The run manifest's format (Manifest, ReadManifest) lives here too: the
// pipeline writes run.json, and report and `manejo inspect` read it, and
// report may import export but not pipeline.
//
// The SINM payload built from these rows is package sinm's. export imports
// grid (shared types), parquet-go and orb; it does not import the stage
// packages or any cloud SDK.
package export
