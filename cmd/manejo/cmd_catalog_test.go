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
