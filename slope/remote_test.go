package slope

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
)

// TestOpenRemote reads the same 1″ COG from local disk, from an in-process
// S3 server (s3:// → /vsis3/) and over HTTP (https:// → /vsicurl/, here
// plain http on loopback), and expects the same slope.
func TestOpenRemote(t *testing.T) {
	dir := t.TempDir()
	const n = 120
	gt := [6]float64{-52, arcsec, 0, -28, 0, -arcsec}
	local := writeTestDEM(t, dir, "dem.tif", synthHills(n, gt), n, n, gt, 4326)
	data, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	f := grid.Field{ID: "remote", Geometry: orb.MultiPolygon{{{
		{-51.99, -28.01}, {-51.98, -28.01}, {-51.98, -28.02}, {-51.99, -28.02}, {-51.99, -28.01},
	}}}}
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
