#!/usr/bin/env bash
# Submit one pre-season run of manejo as an AWS Batch array job: N children,
# each a shard. Batch sets AWS_BATCH_JOB_ARRAY_INDEX (0..N-1) in each child;
# `manejo run --shards N` turns it into the shard i/N, and every shard writes
# its own part-<i>-of-<N> files under --out, so the folder reads as one
# dataset. A child that dies is retried (retryStrategy, 3 attempts) and
# resumes from the batches it had committed; a finished shard is skipped.
#
# Register the job definition once:
#   aws batch register-job-definition --cli-input-json file://deploy/aws-batch/job-definition.json
set -euo pipefail

N=${N:-16}                       # shards = array size; ~500–2,000 talhões per shard
QUEUE=${QUEUE:-manejo-spot}      # a job queue on a managed EC2 (Spot) compute environment
SEASON=${SEASON:-2026/2027}
OUT=${OUT:-s3://example-portfolio/manejo/2026-2027}
ASOF=${ASOF:-2026-08-01}         # weekly runs: ASOF=$(date -u +%F)
CACHE=${CACHE:-s3://example-portfolio/manejo-cache/}   # observation cache: a weekly run reads only new scenes (docs/cache.md)

aws batch submit-job \
  --job-name "manejo-${SEASON/\//-}" \
  --job-queue "$QUEUE" \
  --job-definition manejo-run \
  --array-properties size="$N" \
  --parameters "shards=$N,season=$SEASON,asof=$ASOF,cache=$CACHE,out=$OUT,fields=s3://example-portfolio/talhoes/2026.gpkg,catalog=s3://example-portfolio/stac/sentinel-2-l2a.ndjson"

# The same with the command spelled out (container overrides win over the
# job definition's command and parameters):
#
# aws batch submit-job --job-name manejo-2026-2027 --job-queue "$QUEUE" \
#   --job-definition manejo-run --array-properties size="$N" \
#   --container-overrides '{"command": ["run",
#       "--fields", "s3://example-portfolio/talhoes/2026.gpkg",
#       "--catalog", "s3://example-portfolio/stac/sentinel-2-l2a.ndjson",
#       "--dem", "s3://example-portfolio/dem/nasadem-mt.vrt",
#       "--season", "2026/2027", "--as-of", "2026-08-01",
#       "--satellite-codes", "sentinel-2-l2a=S01,dem=S09",
#       "--out", "s3://example-portfolio/manejo/2026-2027",
#       "--shards", "16"]}'
#
# Follow it:
#   aws batch describe-jobs --jobs <jobId>            # arrayProperties.statusSummary
#   aws s3 ls s3://example-portfolio/manejo/2026-2027/run/   # one manifest per finished shard
