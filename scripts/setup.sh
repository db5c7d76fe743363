#!/usr/bin/env bash
# Installs what manejo needs on a Debian machine, only when it is missing:
# GDAL (headers, library, command-line tools), pkg-config, Chromium (report
# tests), then the Go modules and the pinned staticcheck (make lint). Safe to
# run again and again.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need=()
command -v gdal-config >/dev/null 2>&1 || need+=(libgdal-dev)
command -v gdalinfo    >/dev/null 2>&1 || need+=(gdal-bin)
command -v pkg-config  >/dev/null 2>&1 || need+=(pkg-config)
command -v gcc         >/dev/null 2>&1 || need+=(gcc)
command -v chromium    >/dev/null 2>&1 || need+=(chromium)

if [ "${#need[@]}" -gt 0 ]; then
  echo "setup: installing ${need[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is not on PATH (need Go >= 1.26; /usr/local/go/bin?)" >&2
  exit 1
fi

go mod download

# staticcheck for make lint, pinned, in the project's own bin/tools (not on
# PATH, not shared with other projects). Reinstalled only when the version
# there is not the pinned one.
STATICCHECK_VERSION=0.8.2 # staticcheck 2026.2.2, builds with Go 1.26
tools="$(cd "$(dirname "$0")/.." && pwd)/bin/tools"
if ! "$tools/staticcheck" -version 2>/dev/null | grep -qF "($STATICCHECK_VERSION)"; then
  echo "setup: installing staticcheck v$STATICCHECK_VERSION into $tools" >&2
  GOBIN="$tools" go install "honnef.co/go/tools/cmd/staticcheck@v$STATICCHECK_VERSION"
fi

echo "setup: GDAL $(gdal-config --version), $(go version | awk '{print $3}'), $("$tools/staticcheck" -version)" >&2
