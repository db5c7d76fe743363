#!/usr/bin/env bash
# Submit one pre-season run of manejo with the block exchange (docs/deploy.md,
# "Two phases: the block exchange") as two AWS Batch array jobs of N children:
#   1. --phase read: each child reads the scenes its shard owns for every
#      talhão under them and hands the observations over under
#      --out/_exchange/ (a marker per shard, written last);
#   2. --phase finish, submitted with a plain dependency on job 1 (no type:
#      it starts once every child of job 1 has succeeded; N_TO_N would let
#      child i start after read child i alone): each child takes what the
#      read phases handed its shard and computes its talhões.
# A child of either job that dies is retried (the job definition's
# retryStrategy): a read child reads again, a finish child resumes from its
# committed batches. If a read child fails for good, Batch fails job 2.
#
# The two inputs are deploy/aws-batch/exchange-jobs.json (checked against the
# SDK's SubmitJobInput by `go test ./deploy/`); edit the paths and sizes
# there. Register the job definition first (job-definition.json).
set -euo pipefail

JOBS=${JOBS:-deploy/aws-batch/exchange-jobs.json}

READ_ID=$(jq -c '.[0]' "$JOBS" | aws batch submit-job --cli-input-json file:///dev/stdin --query jobId --output text)
echo "read phase: $READ_ID"
FINISH_ID=$(jq -c --arg id "$READ_ID" '.[1] | .dependsOn[0].jobId = $id' "$JOBS" |
  aws batch submit-job --cli-input-json file:///dev/stdin --query jobId --output text)
echo "finish phase: $FINISH_ID (starts when every read child has succeeded)"

# Follow them:
#   aws batch describe-jobs --jobs "$READ_ID" "$FINISH_ID"   # arrayProperties.statusSummary
#   aws s3 ls s3://example-portfolio/manejo/2026-2027/_exchange/ --recursive | grep _SUCCESS
