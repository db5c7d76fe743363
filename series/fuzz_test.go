package series

import (
	"context"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
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

// FuzzLoadCatalog feeds one input to LoadCatalog in the three forms a
// catalog takes: a single document (ItemCollection, Item or NDJSON), the
// same bytes as NDJSON file, and a folder of two item files split at cut.
// Whatever it accepts keeps the invariants of FuzzParseItems, and every
// href it admits (the default rule: the catalog's folder) lies inside the
// folder.
func FuzzLoadCatalog(f *testing.F) {
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"b","bbox":[0,0,1,1],"properties":{"datetime":"2024-01-01"},"assets":{"x":{"href":"../../etc/passwd"}}}]}`), uint16(10))
	f.Add([]byte("{\"type\":\"Feature\",\"id\":\"a\",\"bbox\":[0,0,1,1],\"properties\":{\"datetime\":\"2024-01-01\"},\"assets\":{\"r\":{\"href\":\"file:///etc/shadow\"}}}\n{\"type\":\"Feature\",\"id\":\"c\",\"bbox\":[0,0,1,1],\"properties\":{\"datetime\":\"2024-01-02\"},\"assets\":{\"r\":{\"href\":\"red.tif\"}}}\n"), uint16(120))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		dir := t.TempDir()
		items := filepath.Join(dir, "items")
		if err := os.Mkdir(items, 0o755); err != nil {
			t.Fatal(err)
		}
		c := int(cut) % (len(data) + 1)
		for name, b := range map[string][]byte{"catalog.json": data, "catalog.ndjson": data, "items/a.json": data[:c], "items/b.json": data[c:]} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, src := range []string{"catalog.json", "catalog.ndjson", "items"} {
			cat, _ := LoadCatalog(context.Background(), filepath.Join(dir, src), CatalogOptions{})
			if cat == nil {
				continue
			}
			for _, it := range cat.Items {
				if it.ID == "" || it.Datetime.IsZero() || len(it.Assets) == 0 {
					t.Fatalf("%s: accepted item without id, datetime or assets: %+v", src, it)
				}
				for k, a := range it.Assets {
					p, err := gdalPath(a.Href, cat.allow)
					if err != nil {
						continue
					}
					root := cat.allow[0].path
					if p != root && !strings.HasPrefix(p, root+"/") {
						t.Fatalf("%s: asset %s href %q admitted as %s, outside %s", src, k, a.Href, p, root)
					}
				}
			}
		}
	})
}

// FuzzHref: an href admitted under a prefix is opened by a name at or
// below the prefix (scheme, host, whole segments), with no "..", no
// userinfo and no other host.
func FuzzHref(f *testing.F) {
	for _, s := range [][2]string{
		{"/data/archive/../etc/passwd", "/data/archive"}, {"/data/archive-evil/x.tif", "/data/archive"},
		{"https://a.example:8443@b.example:8443/x.tif", "https://a.example:8443"}, {"s3://bucket/a/../../x.tif", "s3://bucket/a"},
		{"file:///data/archive/x.tif", "/data/archive/"}, {"https://a.example/p/%2e%2e/x.tif", "https://a.example/p"},
		{"https://A.example:443/p/x.tif?sig=1#f", "https://a.example/p"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, href, prefix string) {
		rules, err := parseRules([]string{prefix})
		if err != nil || len(rules) != 1 {
			return
		}
		r := rules[0]
		p, err := gdalPath(href, rules)
		if err != nil {
			return
		}
		switch {
		case r.scheme == "file":
			if p != r.path && !strings.HasPrefix(p, strings.TrimSuffix(r.path, "/")+"/") {
				t.Fatalf("href %q under %q opened as %s", href, prefix, p)
			}
		case r.scheme == "s3":
			if !strings.HasPrefix(p, "/vsis3/"+r.host+"/") {
				t.Fatalf("href %q under %q opened as %s", href, prefix, p)
			}
		default:
			u, err := url.Parse(strings.TrimPrefix(p, "/vsicurl/"))
			if err != nil || u.User != nil || strings.ToLower(u.Host) != r.host || u.Scheme != "https" {
				t.Fatalf("href %q under %q opened as %s", href, prefix, p)
			}
		}
		for _, seg := range strings.Split(strings.SplitN(p, "?", 2)[0], "/") {
			if seg == ".." {
				t.Fatalf("href %q under %q opened as %s, with ..", href, prefix, p)
			}
		}
	})
}
