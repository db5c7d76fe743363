package series

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/internal/testkit"
)

// writeCatalogFile writes an ItemCollection of n Sentinel-2 items with pad
// bytes of whitespace after every comma between items and inside every
// item, and returns its path and size.
func writeCatalogFile(t testing.TB, n, pad int) (string, int64) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	space := strings.Repeat(" \n\t", pad/3)
	w.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			w.WriteString("," + space)
		}
		day := fmt.Sprintf("20%02d-%02d-%02d", 16+i/4000%10, 1+i/300%12, 1+i%28)
		fmt.Fprintf(w, `{"type":"Feature","stac_version":"1.0.0","id":"S2B_21LXG_%s_%d_L2A","collection":"sentinel-2-l2a",`+space+
			`"bbox":[-56.1,-12.8,-55.1,-11.8],"geometry":{"type":"Polygon","coordinates":[[[-56.1,-12.8],[-55.1,-12.8],[-55.1,-11.8],[-56.1,-11.8],[-56.1,-12.8]]]},`+
			`"properties":{"datetime":"%sT13:45:00Z","proj:epsg":32721,"eo:cloud_cover":12.5,"s2:processing_baseline":"05.10"},"assets":{`, day, i, day)
		for j, k := range []string{"red", "nir", "swir16", "swir22", "scl"} {
			if j > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `"%s":{"href":"s2/%d/%s.tif","type":"image/tiff; application=geotiff; profile=cloud-optimized","raster:bands":[{"scale":0.0001,"offset":-0.1,"nodata":0}]}`, k, i, k)
		}
		w.WriteString("}}")
	}
	w.WriteString("]}")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	return path, st.Size()
}

// TestCatalogMemoryIsBoundedByItem reproduces issue 19 defect 12 for the
// static catalog: a document used to be read whole and its features copied
// (7× its size in memory). It is now streamed item by item:
//   - 49 MB of which 99.9 % is whitespace allocates under 1/16 of the file
//     (measured 0.004×; the whole-document reader allocated 5.6× and
//     peaked 3.4× the file above its result);
//   - an ItemCollection of 40,000 items (48 MB) peaks under the file's
//     size above the catalog it returns (measured 0.16×; the whole-document
//     reader 2.37×).
func TestCatalogMemoryIsBoundedByItem(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB of test files")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		n, pad int
		bound  func(size int64, alloc, transient uint64) bool
		want   string
	}{
		{"whitespace", 24, 1 << 20, func(size int64, alloc, _ uint64) bool { return alloc < uint64(size)/16 }, "under 1/16 of the file allocated"},
		{"dense", 40000, 0, func(size int64, _, transient uint64) bool { return transient < uint64(size) }, "a transient peak under the file's size"},
	} {
		path, size := writeCatalogFile(t, tc.n, tc.pad)
		var cat *Catalog
		alloc, transient := testkit.HeapDuring(func() any {
			var errs []error
			cat, errs = LoadCatalog(ctx, path, CatalogOptions{})
			if len(errs) > 0 {
				t.Fatal(errs[0])
			}
			return cat
		})
		t.Logf("%s catalog: %.1f MB, %d items: allocated %.2f MB (%.3f× the file), transient peak %.2f MB (%.3f× the file)", tc.name,
			float64(size)/1e6, len(cat.Items), float64(alloc)/1e6, float64(alloc)/float64(size), float64(transient)/1e6, float64(transient)/float64(size))
		if len(cat.Items) != tc.n || !tc.bound(size, alloc, transient) {
			t.Errorf("%s catalog of %d bytes: %d items, allocated %d, transient %d; want %d items and %s", tc.name, size, len(cat.Items), alloc, transient, tc.n, tc.want)
		}
	}
}

// An ItemCollection broken inside its features (a truncated download, a
// stray character in a pretty-printed file) is refused whole with one
// error naming the feature, not read as lines that each fail.
func TestBrokenItemCollection(t *testing.T) {
	path, _ := writeCatalogFile(t, 3, 3)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), `"S2B_21LXG_2016-01-02_1_L2A"`)
	b[i-1] = '@' // feature 1's id key loses its colon's neighbour
	os.WriteFile(path, b, 0o644)
	items, errs := parseDocument(b, path)
	if len(items) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "feature 1") || !errors.Is(errs[0], ErrMalformedItem) {
		t.Errorf("broken collection: %d items, errors %v; want none and one error naming feature 1", len(items), errs)
	}
}
