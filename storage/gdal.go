package storage

import (
	"net/url"
	"os"
	"strconv"
	"sync"

	"github.com/airbusgeo/godal"
)

var gdalOnce sync.Once

// InitGDAL prepares GDAL for the process, once however often it is called:
// it registers every GDAL/OGR driver and exports the S3 and retry settings
// of GDALConfig (SetGDALEnv). Call it before any godal open; it is the only
// place godal.RegisterAll is called.
func InitGDAL() {
	gdalOnce.Do(func() {
		godal.RegisterAll()
		SetGDALEnv()
	})
}

// GDALConfig returns the GDAL configuration options that make /vsis3/ use the
// same settings as the SDK: endpoint, path style, https, unsigned requests
// (the credential rule of trust.go), connect and request deadlines
// (ConnectTimeout, RequestTimeout), and retries (GDAL_HTTP_MAX_RETRY = MaxAttempts-1 retries after the first
// attempt, starting GDALRetryDelay seconds apart and doubling). GDAL 3.6
// retries HTTP 429, 500 and 502–504 answers and connection time-outs.
func GDALConfig() map[string]string {
	opts := map[string]string{
		"GDAL_HTTP_MAX_RETRY":   strconv.Itoa(MaxAttempts - 1),
		"GDAL_HTTP_RETRY_DELAY": GDALRetryDelay,
		// Requests and bytes by file, for run.json (GDALNetStats).
		"CPL_VSIL_NETWORK_STATS_ENABLED": "YES",
		// The cache of byte ranges GDAL fetched from /vsis3/ and
		// /vsicurl/ files, shared by the process (GDAL's default 16 MB).
		"CPL_VSIL_CURL_CACHE_SIZE": strconv.Itoa(RangeCacheBytes),
	}
	if e := endpoint(); e != "" {
		if u, err := url.Parse(e); err == nil && u.Host != "" {
			opts["AWS_S3_ENDPOINT"] = u.Host
			if u.Scheme == "http" {
				opts["AWS_HTTPS"] = "NO"
			}
		}
	}
	if pathStyle() {
		opts["AWS_VIRTUAL_HOSTING"] = "FALSE"
	}
	if unsigned() {
		// Asked for, or no credentials configured and the instance
		// metadata service not allowed (trust.go).
		opts["AWS_NO_SIGN_REQUEST"] = "YES"
	}
	for k, v := range gdalTimeouts() {
		opts[k] = v
	}
	if r := os.Getenv("AWS_REGION"); r != "" {
		opts["AWS_REGION"] = r
	}
	return opts
}

// RangeCacheBytes is the size of GDAL's cache of fetched byte ranges
// (CPL_VSIL_CURL_CACHE_SIZE): 4 MB for each of the 32 scenes a run reads
// at once by default (series.DefaultIOConcurrency). GDAL reads a window's
// tiles through that cache and reads some of their bytes again after the
// fetch (a tile's trailer); with its default 16 MB, the ranges fetched by
// the other scenes in flight evicted them first and it fetched them again
// (with read-ahead): on the 10× portfolio one shard of 16 read 1.27× its
// minimum with 16 MB, 1.10× with 64 MB and 1.01× with 128 MB
// (docs/performance.md, "The bytes of each file read").
const RangeCacheBytes = 128 << 20

// SetGDALEnv exports GDALConfig as environment variables, which GDAL reads as
// configuration options, so that every /vsis3/ open in the process (OGR,
// rasters) uses the same S3 settings as the SDK. Variables already set are
// left alone: an operator's explicit GDAL setting wins. InitGDAL calls it
// once; call it again after changing the AWS variables.
func SetGDALEnv() {
	for k, v := range GDALConfig() {
		if _, set := os.LookupEnv(k); !set {
			os.Setenv(k, v)
		}
	}
}
