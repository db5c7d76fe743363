#!/usr/bin/env bash
# Hashes that show a change left the outputs byte for byte alone (issue 29):
# every deterministic file of a `make demo` folder, and the golden files the
# tests compare against (`make golden` rewrites them). Run it on the demo of
# the commit before and of the commit after; equal digests, equal outputs.
#
#   scripts/demo.sh bin/manejo /tmp/demo && scripts/outhashes.sh /tmp/demo
#
# Two files of the demo change from run to run and are left out: out/run.json
# (start and end times, the run's id, durations) and report.html (which
# prints run.json's times). All the others were byte-identical across two
# demo runs of the same binary.
set -euo pipefail
DIR=${1:?usage: scripts/outhashes.sh DEMO_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

list=$(cd "$DIR" && find . -type f ! -path ./out/run.json ! -path ./report.html -print0 |
  LC_ALL=C sort -z | xargs -0 sha256sum)
echo "demo: $(wc -l <<<"$list") files, digest $(sha256sum <<<"$list" | cut -c1-64)"
for part in archive out/sinm out; do
  echo "  $part/: $(grep -c " \./$part/" <<<"$list") files, digest $(grep " \./$part/" <<<"$list" | sha256sum | cut -c1-64)"
done
echo "golden files:"
(cd "$ROOT" && sha256sum grid/testdata/golden/expected.geojson grid/testdata/golden/input.geojson \
  sinm/testdata/payload/expected.json | sed 's/^/  /')
# docs/outputs.md: only its generated schema section is a golden file.
echo "  $(sed -n '/^<!-- schema:begin/,/^<!-- schema:end -->/p' "$ROOT/docs/outputs.md" | sha256sum | cut -c1-64)  docs/outputs.md schema section"
