package stacapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/manejo/manejo/internal/testkit"
)

// bigAnswer is a search API on loopback answering pages pages of per
// items, each item padded to about size bytes (a large property, as the
// attack's 400 KB items), generated as they are sent.
func bigAnswer(t testing.TB, pages, per, size int) *httptest.Server {
	pad := strings.Repeat("x", size)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		w.Header().Set("Content-Type", "application/geo+json")
		fmt.Fprint(w, `{"type":"FeatureCollection","features":[`)
		for i := 0; i < per && page < pages; i++ {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			id := fmt.Sprintf("S2A_21LXG_%03d_%03d_L2A", page, i)
			fmt.Fprintf(w, `{"type":"Feature","id":%q,"collection":"sentinel-2-l2a","bbox":[-55.7,-11.9,-55.6,-11.8],"properties":{"datetime":"2024-01-05T13:58:31Z","pad":%q},"assets":{"red":{"href":"https://sentinel-cogs.s3.us-west-2.amazonaws.com/%s/B04.tif"}}}`, id, pad, id)
		}
		fmt.Fprint(w, `],"links":[`)
		if page+1 < pages {
			fmt.Fprintf(w, `{"rel":"next","href":"%s/search?page=%d"}`, "http://"+r.Host, page+1)
		}
		fmt.Fprint(w, `]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSearchMemoryFollowsItem (issue 27 D11): the peak heap of a search
// whose answer is 10 pages × 20 items × 200 KB (41 MB) stays under 0.15×
// the answer (3.2 MB measured, 0.079×; 52.2 MB, 1.27×, before): pages are
// read as streams, item by item, and the items' documents wait in a
// temporary file, so memory follows the largest item and the parsed items,
// not the answer. Measured with
// runtime.MemStats (testkit.PeakHeapDuring); before, the search held every
// page whole and every document in memory.
func TestSearchMemoryFollowsItem(t *testing.T) {
	const pages, per, size = 10, 20, 200 << 10
	srv := bigAnswer(t, pages, per, size)
	answer := float64(pages * per * size)
	c := &Client{Sleep: noSleep}
	api := &API{Root: srv.URL, Search: srv.URL + "/search?page=0", Method: "GET"}
	var res *Result
	peak := testkit.PeakHeapDuring(func() any {
		var err error
		res, err = c.Search(context.Background(), api, Query{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	})
	defer res.Close()
	t.Logf("answer %.0f MB (%d items): peak heap above the start %.1f MB (%.3f× the answer)", answer/1e6, len(res.Items), float64(peak)/1e6, float64(peak)/answer)
	if len(res.Items) != pages*per || res.Pages != pages {
		t.Fatalf("%d items over %d pages, want %d over %d", len(res.Items), res.Pages, pages*per, pages)
	}
	if float64(peak) > 0.15*answer {
		t.Errorf("peak heap %.1f MB for a %.0f MB answer: more than 0.15× (memory follows the answer, not the largest item)", float64(peak)/1e6, answer/1e6)
	}
	doc, err := res.Doc(pages*per - 1)
	var f struct{ ID string }
	if err != nil || json.Unmarshal(doc, &f) != nil || f.ID != res.Items[pages*per-1].ID || len(doc) < size {
		t.Errorf("last document read back: %v, id %q; want %s", err, f.ID, res.Items[pages*per-1].ID)
	}
}
