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
