package series

import (
	"math"
	"testing"
)

func FuzzParseItems(f *testing.F) {
	f.Add([]byte(`{"type":"Feature","id":"a","collection":"sentinel-2-l2a","bbox":[-55,-12,-54,-11],"properties":{"datetime":"2024-01-01T13:00:00Z","s2:processing_baseline":"05.10"},"assets":{"red":{"href":"B04.tif","raster:bands":[{"scale":0.0001,"offset":-0.1,"nodata":0}]}}}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"b","bbox":[0,0,1,1],"properties":{"datetime":null,"start_datetime":"2013-09-14T00:00:00Z"},"assets":{"x":{"href":"s3://b/k.tif","manejo:band":3}}}]}`))
	f.Add([]byte("{\"id\":\"c\"}\n{\"id\":\"d\",\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[[0,0],[1,0],[1,1],[0,0]]]},\"properties\":{\"datetime\":\"2024-01-01\"},\"assets\":{\"a\":{\"href\":\"https://x/y.tif\"}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, _ := parseDocument(data, "/tmp/catalog.json")
		for _, it := range items {
			if it.ID == "" || it.Datetime.IsZero() || len(it.Assets) == 0 {
				t.Fatalf("accepted item without id, datetime or assets: %+v", it)
			}
			if it.BBox.Min[0] > it.BBox.Max[0] || it.BBox.Min[1] > it.BBox.Max[1] || math.IsNaN(it.BBox.Min[0]) {
				t.Fatalf("accepted bad bbox %v", it.BBox)
			}
			for k, a := range it.Assets {
				if a.Band < 1 {
					t.Fatalf("asset %s band %d", k, a.Band)
				}
			}
		}
	})
}

func FuzzBaseline(f *testing.F) {
	for _, s := range []string{"05.10", "03.01", "N0400", "04.00", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = baselineAtLeast4(s)
	})
}
