// Package worker runs the whole manejo pipeline over a portfolio of talhões:
// grid → series → tillage / coverage → slope → export.
//
// Talhões stream through in batches, so peak memory depends on the batch
// size, not on the number of talhões; inside a batch, series.Sample groups
// the reads by scene (each asset opened once). The talhões of a batch are
// analysed concurrently.
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
// written twice.
package worker
