package stacapi

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/manejo/manejo/series"
)

// itemBase is what the relative hrefs of an item an API returned are
// resolved against: the item's own absolute self link (the STAC rule), else
// the API root taken as a folder ("http://127.0.0.1:8080/stac" resolves
// "a/b.tif" to "http://127.0.0.1:8080/stac/a/b.tif"). Either way the
// resolved hrefs then pass the run's href rules.
func itemBase(doc []byte, root string) string {
	var d struct {
		Links []struct {
			Rel  string `json:"rel"`
			Href string `json:"href"`
		} `json:"links"`
	}
	if json.Unmarshal(doc, &d) == nil {
		for _, l := range d.Links {
			if u, err := url.Parse(l.Href); err == nil && l.Rel == "self" && u.IsAbs() && u.Host != "" {
				return l.Href
			}
		}
	}
	if !strings.HasSuffix(root, "/") {
		root += "/"
	}
	return root
}

// absoluteDoc is the item document doc with the hrefs of its assets as it
// (parsed from doc) resolved them, so that a frozen catalog, read from
// another place, names the same files. A document whose hrefs were all
// absolute is returned unchanged (byte for byte).
func absoluteDoc(doc []byte, it *series.Item) []byte {
	var d map[string]json.RawMessage
	if json.Unmarshal(doc, &d) != nil {
		return doc
	}
	var assets map[string]map[string]json.RawMessage
	if json.Unmarshal(d["assets"], &assets) != nil {
		return doc
	}
	changed := false
	for k, a := range assets {
		var href string
		if json.Unmarshal(a["href"], &href) != nil || isAbsolute(href) {
			continue
		}
		if r, ok := it.Assets[k]; ok && r.Href != href {
			a["href"], _ = json.Marshal(r.Href)
			changed = true
		}
	}
	if !changed {
		return doc
	}
	d["assets"], _ = json.Marshal(assets)
	out, err := json.Marshal(d)
	if err != nil {
		return doc
	}
	return out
}

// isAbsolute reports whether href names its place whole: a URL with a
// scheme, or an absolute path.
func isAbsolute(href string) bool {
	u, err := url.Parse(href)
	return strings.HasPrefix(href, "/") || (err == nil && u.IsAbs())
}
