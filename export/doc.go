// Package export writes what manejo produces: the Parquet datasets read by
// analysts (cells, observations, events, seasons, cycles, indicators), the run
// manifest (run.json) and the SINM remote-sensing payload of each talhão.
//
// Schemas live in one place, the row types of rows.go (CellRow, ObsRow,
// EventRow, SeasonRow, CycleRow, IndicatorRow): their struct tags give the
// Parquet column names and logical types (DATE, FLOAT, DOUBLE, INT32, UTF8,
// LIST), and their `unit`/`doc` tags generate the schema tables of
// docs/outputs.md (SchemaMarkdown). The stage packages are not imported: the
// pipeline worker converts stage results into these rows.
//
// Files are zstd-compressed, sorted by field, cell and date, with row groups
// of at most 1 Mi rows, and carry no timestamp, so the same rows give the same
// bytes. cells.parquet is GeoParquet 1.1 (WKB polygons in OGC:CRS84, a bbox
// covering column). Everything is written through io.Writer and read through
// io.ReaderAt or fs.FS; storage (local or S3) is someone else's job.
//
// The SINM payload (Payload, BuildPayload) follows
// shared/sinm/monitoramento-satelite.schema.json, embedded here and checked
// with a JSON Schema 2020-12 validator (ValidatePayload). Satellite codes come
// from a configurable mapping (SatelliteCodes), never from a guess.
//
// export imports grid (shared types), parquet-go, orb and the JSON Schema
// validator; it does not import the stage packages or any cloud SDK.
package export
