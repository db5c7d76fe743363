# syntax=docker/dockerfile:1
# manejo: multi-stage build. The builder compiles the cgo binary against
# Debian bookworm's GDAL (3.6.2, the version the tests run on); the runtime
# image carries only GDAL's shared libraries, CA certificates and the binary,
# and runs as an unprivileged user.
#
#   docker build -t manejo --build-arg VERSION=$(git describe --tags --always) .
#   docker run --rm -e AWS_REGION=sa-east-1 manejo run --fields s3://... --out s3://...

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgdal-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Modules first, so source edits do not refetch them.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/manejo ./cmd/manejo

FROM debian:bookworm-slim
# libgdal32 is GDAL 3.6 (with libcurl, so /vsis3/ and /vsicurl/ work);
# ca-certificates lets both GDAL and the AWS SDK speak HTTPS.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgdal32 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --create-home --home-dir /home/manejo manejo
COPY --from=build /out/manejo /usr/local/bin/manejo
USER 10001:10001
WORKDIR /home/manejo
# GDAL's block cache is sized by manejo (8 MB per scene read at once from
# local files, GDAL's default for object stores); GDAL_CACHEMAX overrides it.
ENTRYPOINT ["manejo"]
CMD ["help"]
