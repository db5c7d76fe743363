package stacapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/stacapi/stactest"
)

// s2Doc is a Sentinel-2 item document: id, collection, product URI (its
// sensing time is the datetime), baseline and sequence.
func s2Doc(id, coll, uri, baseline, seq string) json.RawMessage {
	dt := "2024-01-05T13:58:31Z"
	if t, err := time.Parse("20060102T150405", strings.Split(uri+"___", "_")[2]); err == nil {
		dt = t.Format(time.RFC3339)
	}
	return json.RawMessage(fmt.Sprintf(`{"type":"Feature","id":%q,"collection":%q,"bbox":[-55.7,-11.9,-55.6,-11.8],
"properties":{"datetime":%q,"platform":"sentinel-2a","s2:product_uri":%q,"s2:processing_baseline":%q,"s2:sequence":%q,"proj:epsg":32721},
"assets":{"red":{"href":"https://sentinel-cogs.s3.us-west-2.amazonaws.com/%s/B04.tif"}}}`, id, coll, dt, uri, baseline, seq, id))
}

// TestDedupe: the duplicate rules of dedup.go. A second copy of a
// (collection, id) is dropped; one acquisition under several ids (sequence
// _0_/_1_, a reprocessed baseline, the l2a and c1-l2a copies of one
// product) keeps the latest processing baseline whatever the order the API
// gave them in; another tile or another day is another acquisition.
func TestDedupe(t *testing.T) {
	const uri0509 = "S2A_MSIL2A_20240105T135831_N0509_R067_T21LXG_20240105T172047.SAFE"
	const uri0510 = "S2A_MSIL2A_20240105T135831_N0510_R067_T21LXG_20240301T101500.SAFE"
	docs := []json.RawMessage{
		s2Doc("S2A_21LXG_20240105_0_L2A", "sentinel-2-l2a", uri0509, "05.09", "0"),
		s2Doc("S2A_21LXG_20240105_1_L2A", "sentinel-2-l2a", uri0510, "05.10", "1"),
		s2Doc("S2A_T21LXG_20240105T135831_L2A", "sentinel-2-c1-l2a", uri0509, "05.09", "0"),
		s2Doc("S2A_21LXG_20240105_0_L2A", "sentinel-2-l2a", uri0509, "05.09", "0"),                                         // page repeat
		s2Doc("S2A_21LXH_20240105_0_L2A", "sentinel-2-l2a", strings.Replace(uri0509, "T21LXG", "T21LXH", 1), "05.09", "0"), // another tile
		s2Doc("S2A_21LXG_20240115_0_L2A", "sentinel-2-l2a", strings.Replace(uri0509, "20240105T135831", "20240115T135831", 1), "05.09", "0"),
		// Issue 28 point 11: the L1C product of the same acquisition is
		// another product, kept (it was folded into the L2A item).
		s2Doc("S2A_21LXG_20240105_0_L1C", "sentinel-2-l1c", strings.Replace(uri0509, "MSIL2A", "MSIL1C", 1), "05.09", "0"),
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1, 0}, {2, 0, 6, 3, 1, 5, 4}} {
		res := &Result{}
		for _, i := range order {
			it, err := series.ParseItem(docs[i], "https://earth-search.aws.element84.com/v1/search")
			if err != nil {
				t.Fatal(err)
			}
			if err := res.add(it, docs[i]); err != nil {
				t.Fatal(err)
			}
		}
		res.Dedupe()
		var kept []string
		for _, it := range res.Items {
			kept = append(kept, it.Collection+"/"+it.ID)
		}
		sort.Strings(kept)
		got := strings.Join(kept, " ")
		want := "sentinel-2-l1c/S2A_21LXG_20240105_0_L1C sentinel-2-l2a/S2A_21LXG_20240105_1_L2A sentinel-2-l2a/S2A_21LXG_20240115_0_L2A sentinel-2-l2a/S2A_21LXH_20240105_0_L2A"
		if got != want || res.Duplicates != 1 || res.SameAcquisition != 2 || res.Kept != 4 || len(res.Dropped) != 3 {
			t.Errorf("order %v: kept %s, %d duplicates, %d same acquisition; want %s, 1, 2", order, got, res.Duplicates, res.SameAcquisition, want)
		}
	}
}

// TestSearchPagingAndFaults runs the client against stactest: POST and
// GET-only APIs, a duplicate across pages, a 429 with Retry-After honoured
// (the wait the client asked for is recorded), and a search whose every
// page keeps failing, which is an ErrSearch and never a short series.
func TestSearchPagingAndFaults(t *testing.T) {
	var docs []json.RawMessage
	for d := 1; d <= 25; d++ {
		uri := fmt.Sprintf("S2A_MSIL2A_202401%02dT135831_N0510_R067_T21LXG_202401%02dT172047.SAFE", d, d)
		docs = append(docs, s2Doc(fmt.Sprintf("S2A_21LXG_202401%02d_0_L2A", d), "sentinel-2-l2a", uri, "05.10", "0"))
	}
	// POST with POST next links (Earth Search, PC), GET only, and POST
	// answered with GET cursor= next links (CMR-STAC): each page holds 10
	// of the 250 asked, and a short page is never taken as the last.
	for _, v := range []struct{ getOnly, cursor bool }{{false, false}, {true, false}, {false, true}} {
		getOnly := v.getOnly
		srv := stactest.New(t, docs)
		srv.Duplicate, srv.Throttle, srv.RetryAfter, srv.GETOnly, srv.CursorGET = true, map[int]bool{2: true}, 7, getOnly, v.cursor
		var waits []time.Duration
		c := &Client{Limit: 250, Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
		api, err := c.Detect(context.Background(), srv.URL)
		if err != nil || api == nil {
			t.Fatalf("Detect: %v %v", api, err)
		}
		wantMethod := map[bool]string{false: "POST", true: "GET"}[getOnly]
		cat, res, err := Find(context.Background(), api, Config{Collections: []string{"sentinel-2-l2a"}, BBox: []float64{-56, -12, -55, -11},
			From: time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 1, 22, 0, 0, 0, 0, time.UTC), Client: c,
			AllowHrefPrefix: []string{"https://sentinel-cogs.s3.us-west-2.amazonaws.com/"}})
		if err != nil {
			t.Fatalf("GET only %v: %v", getOnly, err)
		}
		// Days 3..22: 20 items, pages of 10 (+1 repeated on page 2).
		if api.Method != wantMethod || res.Pages != 2 || res.Returned != 21 || res.Duplicates != 1 || res.Kept != 20 || len(cat.Items) != 20 || res.Matched != 20 || res.Retries != 1 {
			t.Errorf("GET only %v: method %s pages %d returned %d dup %d kept %d matched %d retries %d", getOnly, api.Method, res.Pages, res.Returned, res.Duplicates, res.Kept, res.Matched, res.Retries)
		}
		if len(waits) != 1 || waits[0] != 7*time.Second {
			t.Errorf("waits %v, want the 429's Retry-After: 7 s", waits)
		}
		if cat.Items[0].ID != "S2A_21LXG_20240103_0_L2A" || cat.Items[19].ID != "S2A_21LXG_20240122_0_L2A" {
			t.Errorf("first/last items %s %s", cat.Items[0].ID, cat.Items[19].ID)
		}
		if v.cursor && (!strings.HasPrefix(srv.Requests[0], "POST ") || !strings.HasPrefix(srv.Requests[len(srv.Requests)-1], "GET ") || !strings.Contains(srv.Requests[len(srv.Requests)-1], `"token":"10"`)) {
			t.Errorf("cursor paging requests %v: want a POST, then GET with cursor=10", srv.Requests)
		}
	}

	var calls atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	defer down.Close()
	c := &Client{Sleep: func(context.Context, time.Duration) error { return nil }}
	_, err := c.Search(context.Background(), &API{Root: down.URL, Search: down.URL + "/search", Method: "POST"}, Query{}, nil)
	if !errors.Is(err, ErrSearch) || calls.Load() != MaxAttempts || !strings.Contains(err.Error(), "HTTP 502") {
		t.Errorf("always 502: %v after %d calls; want ErrSearch after %d attempts", err, calls.Load(), MaxAttempts)
	}
}

// TestNextLinks: the next-link shapes of the three APIs, and the guards.
func TestNextLinks(t *testing.T) {
	prev := request{Method: "POST", URL: "https://cmr.earthdata.nasa.gov/stac/LPCLOUD/search", Body: []byte(`{"collections":["HLSS30_2.0"],"limit":250}`)}
	host := "cmr.earthdata.nasa.gov"
	cases := []struct {
		name  string
		links string
		want  string // method URL body, or an error substring
	}{
		{"CMR-STAC: GET cursor after a POST", `[{"rel":"next","href":"https://cmr.earthdata.nasa.gov/stac/LPCLOUD/search?collections=HLSS30_2.0&cursor=eyJqc29uIjoiW1wiaGxz"}]`,
			"GET https://cmr.earthdata.nasa.gov/stac/LPCLOUD/search?collections=HLSS30_2.0&cursor=eyJqc29uIjoiW1wiaGxz "},
		{"Earth Search: POST, whole body", `[{"rel":"next","method":"POST","href":"/stac/LPCLOUD/search","merge":false,"body":{"collections":["HLSS30_2.0"],"next":"a,b,c"}}]`,
			`POST https://cmr.earthdata.nasa.gov/stac/LPCLOUD/search {"collections":["HLSS30_2.0"],"next":"a,b,c"}`},
		{"merge true", `[{"rel":"next","method":"POST","href":"search","merge":true,"body":{"token":"next:x"}}]`,
			`POST https://cmr.earthdata.nasa.gov/stac/LPCLOUD/search {"collections":["HLSS30_2.0"],"limit":250,"token":"next:x"}`},
		{"previous only: last page", `[{"rel":"previous","method":"POST","href":"search","body":{"token":"prev:x"}}]`, "none"},
		{"another host", `[{"rel":"next","href":"https://evil.example/search?cursor=1"}]`, "leaves the API's host"},
	}
	for _, tc := range cases {
		var links []link
		if err := json.Unmarshal([]byte(tc.links), &links); err != nil {
			t.Fatal(err)
		}
		r, ok, err := nextRequest(prev, links, host)
		got := "none"
		switch {
		case err != nil:
			got = err.Error()
		case ok:
			got = r.Method + " " + r.URL + " " + string(r.Body)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestPagingCycleAndCap: a next link that repeats an earlier request is a
// cycle, and MaxPages caps a search: both fail it.
func TestPagingCycleAndCap(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		tok := fmt.Sprint(i % 3) // tokens 1, 2, 0, 1: the fourth request repeats the first
		if r.URL.Query().Get("loop") == "" {
			tok = fmt.Sprint(i)
		}
		fmt.Fprintf(w, `{"type":"FeatureCollection","features":[%s],"links":[{"rel":"next","href":"/search?loop=%s&t=%s"}]}`,
			s2Doc("S2A_21LXG_20240105_"+fmt.Sprint(i)+"_L2A", "sentinel-2-l2a", "", "05.10", "0"), r.URL.Query().Get("loop"), tok)
	}))
	defer srv.Close()
	c := &Client{MaxPages: 5}
	_, err := c.Search(context.Background(), &API{Root: srv.URL, Search: srv.URL + "/search?loop=1", Method: "GET"}, Query{}, nil)
	if !errors.Is(err, ErrSearch) || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("looping next links: %v, want a cycle error", err)
	}
	n.Store(0)
	_, err = c.Search(context.Background(), &API{Root: srv.URL, Search: srv.URL + "/search", Method: "GET"}, Query{}, nil)
	if !errors.Is(err, ErrSearch) || !strings.Contains(err.Error(), "more than 5 pages") {
		t.Errorf("endless next links: %v, want the page cap", err)
	}
}

// TestRetryAfter parses both forms of the header and caps it.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{"3": 3 * time.Second, "": 0, "soon": 0, "-4": 0, "86400": MaxRetryAfter,
		"Tue, 01 Dec 2026 00:00:20 GMT": 20 * time.Second} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}

// TestSearchIntersects: a search by an intersects polygon and a datetime
// interval against stactest keeps the items whose footprint meets the
// polygon on those days, over both collections asked.
func TestSearchIntersects(t *testing.T) {
	var docs []json.RawMessage
	for d := 1; d <= 20; d++ {
		west, coll := -55.7, "sentinel-2-l2a"
		if d%4 == 0 {
			west = -50.0 // another tile
		}
		if d%5 == 0 {
			coll = "landsat-c2-l2"
		}
		docs = append(docs, json.RawMessage(fmt.Sprintf(`{"type":"Feature","id":"X%02d","collection":%q,"bbox":[%g,-11.9,%g,-11.8],
"properties":{"datetime":"2024-01-%02dT13:58:31Z"},"assets":{"red":{"href":"https://h/%02d.tif"}}}`, d, coll, west, west+0.1, d, d)))
	}
	srv := stactest.New(t, docs)
	c := &Client{}
	api, err := c.Detect(context.Background(), srv.URL)
	if err != nil || api == nil {
		t.Fatal(api, err)
	}
	poly := json.RawMessage(`{"type":"Polygon","coordinates":[[[-55.66,-11.86],[-55.64,-11.86],[-55.64,-11.84],[-55.66,-11.84],[-55.66,-11.86]]]}`)
	q := Query{Collections: []string{"sentinel-2-l2a", "landsat-c2-l2"}, Intersects: poly,
		From: time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 1, 17, 0, 0, 0, 0, time.UTC)}
	res, err := c.Search(context.Background(), api, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range res.Items {
		got = append(got, it.ID)
	}
	// Days 3..17 not divisible by 4: 3 5 6 7 9 10 11 13 14 15 17.
	if want := "X03 X05 X06 X07 X09 X10 X11 X13 X14 X15 X17"; strings.Join(got, " ") != want || res.Pages != 2 {
		t.Errorf("items %v on %d pages, want %s on 2", got, res.Pages, want)
	}
	if !strings.Contains(srv.Requests[0], `"intersects":{"type":"Polygon"`) {
		t.Errorf("request %s: want the intersects geometry sent", srv.Requests[0])
	}
}

// TestProductLevel: without s2:product_uri, the product level comes from
// s2:product_type, else the collection's name, so an L1C and an L2A item of
// one acquisition keep apart under the platform/tile/datetime key too.
func TestProductLevel(t *testing.T) {
	for _, c := range []struct{ typ, coll, want string }{
		{"S2MSI1C", "x", "L1C"}, {"S2MSI2A", "x", "L2A"}, {"", "sentinel-2-l1c", "L1C"},
		{"", "sentinel-2-c1-l2a", "L2A"}, {"", "sentinel-1-grd", ""},
	} {
		if got := productLevel(c.typ, c.coll); got != c.want {
			t.Errorf("productLevel(%q, %q) = %q, want %q", c.typ, c.coll, got, c.want)
		}
	}
	doc := func(coll string) json.RawMessage {
		return json.RawMessage(`{"collection":"` + coll + `","properties":{"platform":"sentinel-2a","s2:mgrs_tile":"21LXG","datetime":"2024-01-05T13:58:31.024Z"}}`)
	}
	if a, b := acquisition(doc("sentinel-2-l1c")), acquisition(doc("sentinel-2-l2a")); a.key == "" || a.key == b.key {
		t.Errorf("L1C key %q, L2A key %q: want two acquisitions", a.key, b.key)
	}
}
