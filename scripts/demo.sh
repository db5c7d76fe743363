#!/usr/bin/env bash
# make demo: build a synthetic Sentinel-2 archive (real COGs + STAC), run the
# whole pipeline on it, print the per-talhão result, and write the report.
set -euo pipefail
BIN=${1:-bin/manejo}
DIR=${2:-build/demo}

rm -rf "$DIR"
mkdir -p "$DIR"
echo "== synthetic archive (Sentinel-2 L2A COGs, STAC, talhões, DEM, truth) → $DIR/archive"
"$BIN" synth --out "$DIR/archive" --seed 1

echo "== manejo run → $DIR/out"
set +e
"$BIN" run \
  --fields "$DIR/archive/talhoes.geojson" \
  --catalog "$DIR/archive/catalog.json" \
  --dem "$DIR/archive/dem.tif" \
  --sowing "$DIR/archive/sowing.csv" \
  --season 2026/2027 --as-of 2026-08-01 \
  --satellite-codes 'sentinel-2-l2a=S01,dem=S09' \
  --out "$DIR/out"
code=$?
set -e
# Exit code 3 means "finished, some talhões failed or incomplete, or no payload": the outputs are still there to inspect.
if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then exit "$code"; fi

echo "== result"
"$BIN" inspect "$DIR/out"
"$BIN" sinm validate "$DIR/out/sinm"
echo "== management level preview (soil analyses and crop history of testdata/demo)"
"$BIN" classify --rs "$DIR/out" --rs-csv testdata/demo/contour.csv \
  --soil testdata/demo/soil.csv --crops testdata/demo/crops.csv --out "$DIR/out" | sed -n '1,8p'
"$BIN" report --in "$DIR/out" --out "$DIR/report.html"
echo "report: $DIR/report.html"
