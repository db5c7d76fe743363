package series

import (
	"errors"
	"reflect"
	"testing"
)

// TestCheckHrefs: CheckHrefs counts the assets a profile reads (a
// collection without a profile, an asset no role reads, are not counted),
// refuses those outside the rules, and places the refused ones in their
// deepest common folder per scheme and host, most refused first.
func TestCheckHrefs(t *testing.T) {
	item := func(id, coll string, hrefs map[string]string) *Item {
		it := &Item{ID: id, Collection: coll, Assets: map[string]Asset{}}
		for k, h := range hrefs {
			it.Assets[k] = Asset{Href: h}
		}
		return it
	}
	s2 := func(id, base string) *Item {
		return item(id, "sentinel-2-l2a", map[string]string{"scl": base + "/SCL.tif", "red": base + "/B04.tif", "nir": base + "/B08.tif",
			"swir16": base + "/B11.tif", "swir22": base + "/B12.tif", "thumbnail": "https://elsewhere.example/t.png"})
	}
	items := []*Item{
		s2("a", "https://cogs.example/s2/21/L/XG/2024/1/A"),
		s2("b", "https://cogs.example/s2/21/L/XG/2024/2/B"),
		s2("c", "https://api.example/data/C"),
		item("d", "no-profile-collection", map[string]string{"x": "https://elsewhere.example/x.tif"}),
	}
	cat, err := NewCatalog(items, "https://api.example/stac/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	h := cat.CheckHrefs(Profiles())
	want := HrefCheck{Assets: 15, Refused: 10, Places: []string{"https://cogs.example/s2/21/L/XG/2024/"}, Allowed: []string{"https://api.example/"}}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("CheckHrefs = %+v, want %+v", h, want)
	}
	if h.Misconfigured() {
		t.Error("10 of 15 refused: not misconfigured (a few bad items are skipped one by one)")
	}
	cat, _ = NewCatalog(items[:2], "https://api.example/stac/v1", nil)
	if h := cat.CheckHrefs(Profiles()); !h.Misconfigured() || h.Refused != 10 || h.Assets != 10 {
		t.Errorf("every asset refused: %+v, want misconfigured", h)
	}
	cat, _ = NewCatalog(items[:2], "https://api.example/stac/v1", []string{"https://cogs.example/s2/"})
	if h := cat.CheckHrefs(Profiles()); h.Refused != 0 {
		t.Errorf("allowed: %+v", h)
	}
}

// TestHTTPLoopbackOnly (issue 28 point 2): http:// hrefs and rules are
// accepted on a loopback host only (a local mirror, proxy or test server),
// the default port dropped as https's is.
func TestHTTPLoopbackOnly(t *testing.T) {
	for href, want := range map[string]string{
		"http://127.0.0.1:80/a/../b.tif":  "http://127.0.0.1/b.tif",
		"http://localhost:8080/x.tif":     "http://localhost:8080/x.tif",
		"http://[::1]:9000/stac/item.tif": "http://[::1]:9000/stac/item.tif",
	} {
		if r, err := normalizeHref(href); err != nil || r.String() != want {
			t.Errorf("normalizeHref(%s) = %v, %v; want %s", href, r, err, want)
		}
	}
	for _, href := range []string{"http://example.com/x.tif", "http://10.0.0.1/x.tif", "http://127.0.0.1.evil.com/x.tif"} {
		if _, err := normalizeHref(href); err == nil {
			t.Errorf("normalizeHref(%s) accepted plain http off loopback", href)
		}
	}
	if _, err := NewCatalog(nil, "http://example.com/stac", nil); !errors.Is(err, ErrBadRule) {
		t.Errorf("an http catalog off loopback as the default rule: %v, want ErrBadRule", err)
	}
}
