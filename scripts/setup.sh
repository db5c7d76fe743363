#!/usr/bin/env bash
# Installs what manejo needs on a Debian machine, only when it is missing:
# GDAL (headers, library, command-line tools), pkg-config, Chromium (report
# tests), then the Go modules. Safe to run again and again.
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
echo "setup: GDAL $(gdal-config --version), $(go version | awk '{print $3}')" >&2
