package slope

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
)

// remoteDEM writes a 1″ COG of hills into a temporary folder and returns
// the folder, the file, its bytes and a talhão over it.
func remoteDEM(t *testing.T) (dir, local string, data []byte, f grid.Field) {
	t.Helper()
	dir = t.TempDir()
	const n = 120
	gt := [6]float64{-52, arcsec, 0, -28, 0, -arcsec}
	local = writeTestDEM(t, dir, "dem.tif", synthHills(n, gt), n, n, gt, 4326)
	data, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	f = grid.Field{ID: "remote", Geometry: orb.MultiPolygon{{{
		{-51.99, -28.01}, {-51.98, -28.01}, {-51.98, -28.02}, {-51.99, -28.02}, {-51.99, -28.01},
	}}}}
	return dir, local, data, f
}

// TestOpenRemote reads the same 1″ COG from local disk, from an in-process
// S3 server (s3:// → /vsis3/) and over HTTP (https:// → /vsicurl/, here
// plain http on loopback), and expects the same slope.
func TestOpenRemote(t *testing.T) {
	dir, local, data, f := remoteDEM(t)
	mean := func(src string) float64 {
		t.Helper()
		d, err := Open(context.Background(), src)
		if err != nil {
			t.Fatalf("Open(%s): %v", src, err)
		}
		defer d.Close()
		res, err := d.Field(context.Background(), f)
		if err != nil {
			t.Fatalf("Field via %s: %v", src, err)
		}
		return res.MeanPct
	}
	want := mean(local)

	t.Run("s3", func(t *testing.T) {
		s3test.StartS3(t, "dem-bucket")
		for k, v := range storage.GDALConfig() {
			t.Setenv(k, v)
		}
		t.Setenv("GDAL_DISABLE_READDIR_ON_OPEN", "EMPTY_DIR")
		if err := storage.WriteFile(context.Background(), "s3://dem-bucket/nasadem/dem.tif", data); err != nil {
			t.Fatal(err)
		}
		if got := mean("s3://dem-bucket/nasadem/dem.tif"); math.Abs(got-want) > 1e-12 {
			t.Errorf("mean via s3 = %v, local %v", got, want)
		}
	})
	t.Run("http", func(t *testing.T) {
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		defer srv.Close()
		t.Setenv("GDAL_DISABLE_READDIR_ON_OPEN", "EMPTY_DIR")
		if got := mean(srv.URL + "/" + filepath.Base(local)); math.Abs(got-want) > 1e-12 {
			t.Errorf("mean via http = %v, local %v", got, want)
		}
	})
}

// TestReadThroughGDALRetries (issue 26, review #6): a DEM on a loopback
// HTTP server whose tile reads answer 503. When GDAL's own retry gets
// the tile (the first 503 only), the slope is read, equal to the local
// one: GDAL's retry warning is no error (before, godal's default handler
// failed the read on it, URL included). When every retry fails too, the
// error wraps ErrRetried and names the status, without the URL.
func TestReadThroughGDALRetries(t *testing.T) {
	_, local, data, f := remoteDEM(t)
	var failures atomic.Int64 // tile reads still to answer 503; < 0: all
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var from int
		fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-", &from)
		if from > 0 && (failures.Load() < 0 || failures.Add(-1) >= 0) {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		http.ServeContent(w, r, "dem.tif", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	t.Setenv("GDAL_DISABLE_READDIR_ON_OPEN", "EMPTY_DIR")
	t.Setenv("GDAL_HTTP_MAX_RETRY", "2")
	t.Setenv("GDAL_HTTP_RETRY_DELAY", "0.01")
	field := func(src string) (Result, error) {
		t.Helper()
		d, err := Open(context.Background(), src)
		if err != nil {
			t.Fatalf("Open(%s): %v", src, err)
		}
		defer d.Close()
		return d.Field(context.Background(), f)
	}
	want, err := field(local)
	if err != nil {
		t.Fatal(err)
	}
	failures.Store(1)
	got, err := field(srv.URL + "/once/dem.tif")
	if err != nil || got.MeanPct != want.MeanPct {
		t.Errorf("one 503, then the tile: %v, mean %v; want the local mean %v", err, got.MeanPct, want.MeanPct)
	}
	failures.Store(-1)
	_, err = field(srv.URL + "/down/dem.tif")
	if !errors.Is(err, ErrRetried) || !strings.Contains(err.Error(), "HTTP error code: 503") || strings.Contains(err.Error(), srv.URL+"/down/dem.tif.") {
		t.Errorf("every tile read 503: %v; want ErrRetried with the status, without the URL", err)
	}
}

// TestSignedDEMRedacted (docs/security.md: credentials): a DEM read by a
// signed URL (a SAS token, as a stac: DEM's tiles are) never puts its
// signature in an error, whether GDAL's own failure names the URL (a file
// that is not a TIFF) or manejo's message does (a tile read that fails
// after GDAL's retries, a talhão outside the DEM), nor when a mosaic of
// signed tiles cannot open one (GDAL's warning names its URL); the rest of
// the message stays.
func TestSignedDEMRedacted(t *testing.T) {
	_, _, data, f := remoteDEM(t)
	const secret = "sig=SeCrEt%2Bsas"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var from int
		fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-", &from)
		switch {
		case strings.HasPrefix(r.URL.Path, "/notiff/"):
			w.Write([]byte("<html>not a DEM</html>"))
		case from > 0:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.ServeContent(w, r, "dem.tif", time.Time{}, bytes.NewReader(data))
		}
	}))
	defer srv.Close()
	t.Setenv("GDAL_DISABLE_READDIR_ON_OPEN", "EMPTY_DIR")
	t.Setenv("GDAL_HTTP_MAX_RETRY", "1")
	t.Setenv("GDAL_HTTP_RETRY_DELAY", "0.01")
	query := "?sv=2024-01-01&se=2030-01-01&sp=r&" + secret
	_, err := Open(context.Background(), srv.URL+"/notiff/dem.tif"+query)
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "(signature redacted)") {
		t.Errorf("not a TIFF: %v; want an error with the signature redacted", err)
	}
	d, err := Open(context.Background(), srv.URL+"/down/dem.tif"+query)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer d.Close()
	_, err = d.Field(context.Background(), f)
	if !errors.Is(err, ErrRetried) || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "(signature redacted)") {
		t.Errorf("tile reads 503: %v; want ErrRetried with the signature redacted", err)
	}
	far := grid.Field{ID: "far", Geometry: orb.MultiPolygon{{{{-40, -10}, {-39.99, -10}, {-39.99, -10.01}, {-40, -10.01}, {-40, -10}}}}}
	_, err = d.Field(context.Background(), far)
	if err == nil || !strings.Contains(err.Error(), "outside the DEM extent") || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "(signature redacted)") {
		t.Errorf("a talhão outside the DEM: %v; want its extent named, the signature redacted", err)
	}
	// A stac: DEM's mosaic of signed tiles: GDAL skips the tile it cannot
	// open with a warning naming its URL, which fails the open.
	_, err = OpenMosaic(context.Background(), "stac:dem", []string{srv.URL + "/notiff/dem.tif" + query, srv.URL + "/notiff/b.tif" + query})
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "(signature redacted)") || !strings.Contains(err.Error(), "Skipping") {
		t.Errorf("a mosaic of tiles that are no TIFF: %v; want the open failed, naming the tiles with their signatures redacted", err)
	}
}
