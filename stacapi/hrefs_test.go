package stacapi

import (
	"encoding/json"
	"testing"

	"github.com/manejo/manejo/series"
)

// TestRelativeHrefs (issue 28 point 2): an API item's relative hrefs are
// resolved against its absolute self link, else against the API root
// taken as a folder, and the frozen document names the resolved hrefs
// (an absolute one is left as it was, byte for byte).
func TestRelativeHrefs(t *testing.T) {
	item := func(links string) []byte {
		return []byte(`{"type":"Feature","id":"X","collection":"c","bbox":[0,0,1,1],"properties":{"datetime":"2024-01-02T00:00:00Z"},` +
			`"links":[` + links + `],"assets":{"red":{"href":"red/B04.tif"},"abs":{"href":"https://cogs.example/B08.tif"}}}`)
	}
	for _, c := range []struct{ links, root, want string }{
		{``, "http://127.0.0.1:8080/stac", "http://127.0.0.1:8080/stac/red/B04.tif"},
		{``, "http://127.0.0.1:8080/stac/", "http://127.0.0.1:8080/stac/red/B04.tif"},
		{`{"rel":"self","href":"http://127.0.0.1:8080/stac/collections/c/items/X"}`, "http://127.0.0.1:8080/stac", "http://127.0.0.1:8080/stac/collections/c/items/red/B04.tif"},
		{`{"rel":"self","href":"items/X"}`, "http://127.0.0.1:8080/stac", "http://127.0.0.1:8080/stac/red/B04.tif"},
	} {
		doc := item(c.links)
		it, err := series.ParseItem(doc, itemBase(doc, c.root))
		if err != nil {
			t.Fatal(err)
		}
		if got := it.Assets["red"].Href; got != c.want {
			t.Errorf("links %s, root %s: href %s, want %s", c.links, c.root, got, c.want)
		}
		var frozen struct {
			Assets map[string]struct{ Href string } `json:"assets"`
		}
		if err := json.Unmarshal(absoluteDoc(doc, it), &frozen); err != nil || frozen.Assets["red"].Href != c.want || frozen.Assets["abs"].Href != "https://cogs.example/B08.tif" {
			t.Errorf("frozen assets %+v (%v), want red %s", frozen.Assets, err, c.want)
		}
	}
	abs := []byte(`{"id":"Y","assets":{"a":{"href":"https://x.example/a.tif"}}}`)
	if got := absoluteDoc(abs, &series.Item{Assets: map[string]series.Asset{"a": {Href: "https://x.example/a.tif"}}}); string(got) != string(abs) {
		t.Errorf("an item with absolute hrefs was rewritten: %s", got)
	}
}
