package series

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
)

// TestS3Archive reads the catalog through the storage package's opener and
// the COGs through GDAL's /vsis3/, from an in-process S3 server, with
// relative hrefs resolved against the s3:// catalog URL.
func TestS3Archive(t *testing.T) {
	s3test.StartS3(t, "archive")
	ctx := context.Background()
	dir := t.TempDir()
	it, pts := s2Spec(4, 1200).build(t, dir, "s3scene", "2024-01-01T13:00:00Z")
	writeJSON(t, filepath.Join(dir, "catalog.json"), collection(it))
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := storage.WriteFile(ctx, "s3://archive/s2/"+e.Name(), data); err != nil {
			t.Fatal(err)
		}
	}
	cat, errs := LoadCatalog(ctx, "s3://archive/s2/catalog.json", CatalogOptions{Open: storage.Open, AllowHrefPrefixes: []string{"s3://archive/"}})
	if len(errs) > 0 || cat == nil {
		t.Fatalf("LoadCatalog: %v", errs)
	}
	if h := cat.Items[0].Assets["red"].Href; h != "s3://archive/s2/s3scene_red.tif" {
		t.Fatalf("red href %s, want s3://archive/s2/s3scene_red.tif", h)
	}
	var cfg []string
	for k, v := range storage.GDALConfig() {
		cfg = append(cfg, k+"="+v)
	}
	obs, st, err := Sample(ctx, cat, []grid.Grid{fieldAround("f", 0.0002, pts...)}, Options{GDALConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 || st.ScenesRead != 1 {
		t.Fatalf("obs %+v stats %+v", obs, st)
	}
	for _, o := range obs {
		if o.Mask != "" || !near(float64(o.NDVI), 0.5) || !near(float64(o.NDTI), 0.25) {
			t.Errorf("obs %+v, want NDVI 0.5, NDTI 0.25", o)
		}
	}
}
