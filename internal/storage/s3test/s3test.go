// Package s3test starts an in-process S3 protocol server for tests.
package s3test

import (
	"net/http/httptest"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/manejo/manejo/internal/storage"
)

// StartS3 starts an in-process S3 protocol server (gofakes3) on loopback,
// creates the given buckets, points the standard AWS variables at it for the
// rest of the test and resets the client. GDAL's /vsis3/ sees the same
// settings through GDALConfig.
func StartS3(tb testing.TB, buckets ...string) *httptest.Server {
	tb.Helper()
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			tb.Fatalf("create bucket %s: %v", b, err)
		}
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	tb.Cleanup(srv.Close)
	tb.Setenv("AWS_ENDPOINT_URL", srv.URL)
	tb.Setenv("AWS_ACCESS_KEY_ID", "test")
	tb.Setenv("AWS_SECRET_ACCESS_KEY", "testsecret")
	tb.Setenv("AWS_REGION", "us-east-1")
	tb.Setenv("AWS_S3_USE_PATH_STYLE", "true")
	tb.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	storage.ResetClient()
	tb.Cleanup(storage.ResetClient)
	return srv
}
