package storage

import "testing"

func TestGDALPath(t *testing.T) {
	for in, want := range map[string]string{
		"s3://bucket/dem/nasadem.vrt": "/vsis3/bucket/dem/nasadem.vrt",
		"https://x.org/t.geojson?a=1": "/vsicurl/https://x.org/t.geojson?a=1",
		"http://127.0.0.1:9000/x.tif": "/vsicurl/http://127.0.0.1:9000/x.tif",
		"gs://b/t.shp":                "/vsigs/b/t.shp",
		"/data/t.gpkg":                "/data/t.gpkg",
		"relative/dem.tif":            "relative/dem.tif",
		"/vsizip/data/t.zip/t.shp":    "/vsizip/data/t.zip/t.shp",
		"/vsimem/x.tif":               "/vsimem/x.tif",
	} {
		got := GDALPath(in)
		if got != want {
			t.Errorf("GDALPath(%q) = %q, want %q", in, got, want)
		}
		if back := LocationOf(got); back != in && got != in {
			t.Errorf("LocationOf(%q) = %q, want %q", got, back, in)
		}
	}
}
