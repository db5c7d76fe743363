package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/stacapi/stactest"
)

// TestCatalogSearch: manejo catalog search against a loopback STAC API
// with 23 items over two tiles (12 match the bbox and dates), pages of 10
// and the last item of page 1 repeated on page 2: it prints the figures
// and writes the 12 items, which --catalog reads back.
func TestCatalogSearch(t *testing.T) {
	var docs []json.RawMessage
	for d := 1; d <= 23; d++ {
		west := -55.7
		if d%2 == 0 && d > 12 {
			west = -50.0 // another tile, away from the bbox
		}
		docs = append(docs, json.RawMessage(fmt.Sprintf(`{"type":"Feature","id":"S2A_21LXG_202401%02d_0_L2A","collection":"sentinel-2-l2a",
"bbox":[%g,-11.9,%g,-11.8],"properties":{"datetime":"2024-01-%02dT13:58:31Z"},"assets":{"red":{"href":"https://sentinel-cogs.s3.us-west-2.amazonaws.com/x/%02d/B04.tif"}}}`, d, west, west+0.1, d, d)))
	}
	srv := stactest.New(t, docs)
	srv.Duplicate = true
	out := filepath.Join(t.TempDir(), "items.json")
	code, stdout, stderr := runCLI(t, "catalog", "search", "--api", srv.URL, "--collections", "sentinel-2-l2a",
		"--bbox", "-56,-12,-55,-11", "--from", "2024-01-01", "--to", "2024-01-16", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	// Days 1..16 on the west tile: 1..12 and the odd days 13, 15 = 14 items.
	want := "matched 14, returned 15, duplicates 1, same acquisition 0, malformed 0, pages 2, retries 0: 14 items written to " + out
	if strings.TrimSpace(stdout) != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Type     string            `json:"type"`
		Search   map[string]any    `json:"manejo:search"`
		Features []json.RawMessage `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil || fc.Type != "FeatureCollection" || len(fc.Features) != 14 || fc.Search["api"] != srv.URL {
		t.Errorf("frozen catalog: %v, type %s, %d features, search %v", err, fc.Type, len(fc.Features), fc.Search)
	}
	if code, _, stderr := runCLI(t, "catalog", "search", "--api", srv.URL, "--out", out); code != exitUsage || !strings.Contains(stderr, "--fields") {
		t.Errorf("without a footprint: exit %d %s, want a usage error", code, stderr)
	}
}

// TestCatalogSearchLevels (issue 28 point 11): a search over
// sentinel-2-l2a, sentinel-2-l1c and sentinel-1-grd folded each L1C item
// into the L2A item of its acquisition ("same acquisition 1") and lost it.
// Both are kept now; the collections no sensor profile reads are named.
func TestCatalogSearchLevels(t *testing.T) {
	const uri = "S2A_MSIL2A_20240105T135831_N0509_R067_T21LXG_20240105T172047.SAFE"
	doc := func(id, coll, uri string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":"Feature","id":%q,"collection":%q,"bbox":[-55.7,-11.9,-55.6,-11.8],
"properties":{"datetime":"2024-01-05T13:58:31Z","platform":"sentinel-2a","s2:product_uri":%q},"assets":{"red":{"href":"https://x.example/%s/B04.tif"}}}`, id, coll, uri, id))
	}
	srv := stactest.New(t, []json.RawMessage{
		doc("S2A_21LXG_20240105_0_L2A", "sentinel-2-l2a", uri),
		doc("S2A_21LXG_20240105_0_L1C", "sentinel-2-l1c", strings.Replace(uri, "MSIL2A", "MSIL1C", 1)),
		json.RawMessage(`{"type":"Feature","id":"S1A_IW_GRDH_20240105","collection":"sentinel-1-grd","bbox":[-55.7,-11.9,-55.6,-11.8],
"properties":{"datetime":"2024-01-05T09:00:00Z","platform":"sentinel-1a"},"assets":{"vv":{"href":"https://x.example/s1/vv.tif"}}}`),
	})
	out := filepath.Join(t.TempDir(), "items.json")
	code, stdout, stderr := runCLI(t, "catalog", "search", "--api", srv.URL, "--collections", "sentinel-2-l2a,sentinel-2-l1c,sentinel-1-grd",
		"--bbox", "-56,-12,-55,-11", "--from", "2024-01-01", "--to", "2024-01-16", "--out", out)
	if code != exitOK || !strings.Contains(stdout, "same acquisition 0, malformed 0, pages 1, retries 0: 3 items written") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"collection sentinel-1-grd has no sensor profile: manejo cannot read it (1 items kept in the file; a run skips them as no-profile)",
		"collection sentinel-2-l1c has no sensor profile",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "sentinel-2-l2a has no") {
		t.Errorf("sentinel-2-l2a called unreadable:\n%s", stderr)
	}
}
