// Package cache is the observation cache of scheduled runs (`manejo run
// --cache DIR|s3://bucket/prefix/`, docs/cache.md): the observations a run
// sampled, kept so that the next run reads only the scenes it has not seen.
//
// The cache holds one Parquet partition per talhão
// (observations-v1/talhao=<hash of the id>.parquet): the raw observations
// of every scene read in full for it, as series.SceneRead gives them, and
// in its metadata (Meta) the talhão's GridKey, the manejo version, and per
// scene the item's fingerprint, the profile rules it was read with and what
// reading it cost, with a checksum of the rows. A shard reads and writes
// only its own talhões, each partition in one atomic write, so concurrent
// shards and reruns need no lock.
//
// A run asks a Batch which (talhão, scene) pairs it can serve
// (series.Options.Known and Cached): those whose item fingerprint and
// profile rules match; a talhão whose polygon, grid or manejo version
// changed, or whose partition is corrupt or foreign, is read whole. series
// then reads only the other pairs and analyses the union exactly as a
// fresh run would. Scenes that failed, transiently or not, are never
// cached: they are tried again by every run.
package cache
