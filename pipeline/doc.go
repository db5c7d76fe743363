// Package pipeline runs the whole manejo pipeline over a portfolio of
// talhões: grid → series → tillage / coverage → slope → export and sinm. It
// converts the stage results into the rows of every dataset (cells,
// observations, events, seasons, cell_cover, cycles, indicators) and the
// SINM payloads, and writes the run manifest (run.json: export.Manifest
// plus what resuming needs).
//
// Run is the whole run. Its first steps are exposed for the commands that
// run part of it the same way: ReadFields, BuildGrids, LoadCatalog and
// ObsRows; Series (read → grid → catalog → sample → observations file),
// Grid (read → grid on all cores → cells file) and Slopes (DEM → slope of
// every talhão).
//
// Talhões stream through in batches, so peak memory depends on the batch
// size, not on the number of talhões; inside a batch, series.Sample groups
// the reads by scene (each asset opened once). The talhões of a batch are
// analysed concurrently (an errgroup bounded by Workers).
//
// Sharding: a run handles the talhões of one Shard (a stable hash of the
// id); each shard writes `part-<i>-of-<n>` files, so the output folder reads
// as one dataset. The shard comes from --shard, AWS Batch array jobs or
// Kubernetes Indexed Jobs (ShardFromEnv): no scheduler of our own.
//
// Resumability: every finished batch is committed to a staging folder under
// the output (local or S3) with a _SUCCESS marker; a rerun of the same shard
// with the same parameters skips committed batches, and a shard whose
// manifest exists is skipped whole. The final part files are written from the
// staged batches and replace any earlier ones atomically (rename / single
// PUT), so a killed node loses at most the batch it was on and nothing is
// written twice. A killed process's temporary files are removed by the
// rerun of its shard.
//
// Faults: S3 and HTTP requests are retried with backoff (storage); GDAL
// retries each HTTP request of a scene itself, and series.Sample reads a
// scene whose reads still failed transiently again, within a budget
// (Config.SceneAttempts), so a flaky bucket changes nothing in the outputs.
// A scene still failing after that makes the talhões that needed it
// incomplete (export.StatusIncomplete: no rows, no payload, named scenes);
// their batch is never resumed and the shard's manifest is not taken as
// done, so the next run reads them again. A scene that is permanently
// unreadable (a corrupt COG, a 403/404, a missing asset) is skipped and
// counted in run.json (skipped_scenes, warnings); a bad talhão fails alone
// with its reason.
//
// Progress: Config.OnProgress receives a Progress snapshot at the start,
// after each batch and at the end; Bar draws it on a terminal and
// LogProgress writes it as log/slog records.
package pipeline
