package vsi

import "testing"

func TestPath(t *testing.T) {
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
		if got := Path(in); got != want {
			t.Errorf("Path(%q) = %q, want %q", in, got, want)
		}
	}
}
