package stacapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/stacapi/stactest"
	"github.com/manejo/manejo/storage"
)

// days are Sentinel-2 items of January 2024, one a day.
func days(n int) []json.RawMessage {
	var docs []json.RawMessage
	for d := 1; d <= n; d++ {
		uri := fmt.Sprintf("S2A_MSIL2A_202401%02dT135831_N0510_R067_T21LXG_202401%02dT172047.SAFE", d, d)
		docs = append(docs, s2Doc(fmt.Sprintf("S2A_21LXG_202401%02d_0_L2A", d), "sentinel-2-l2a", uri, "05.10", "0"))
	}
	return docs
}

// TestUnrequestedCollection (issue 27 D9): an item of a collection the
// search did not ask for ("../../etc") is dropped and counted, named in a
// problem; it never reaches the catalog (where a collection without a
// satellite code stopped the run as a configuration error).
func TestUnrequestedCollection(t *testing.T) {
	srv := stactest.New(t, days(5))
	srv.Inject = []json.RawMessage{s2Doc("EVIL", "../../etc", "x", "05.10", "0")}
	c := &Client{Sleep: noSleep}
	api, err := c.Detect(context.Background(), srv.URL)
	if err != nil || api == nil {
		t.Fatal(api, err)
	}
	cat, res, err := Find(context.Background(), api, Config{Collections: []string{"sentinel-2-l2a"}, Client: c,
		AllowHrefPrefix: []string{"https://sentinel-cogs.s3.us-west-2.amazonaws.com/"}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var prob series.Problem
	if res.Unrequested != 1 || res.Returned != 6 || len(cat.Items) != 5 || len(res.Problems) != 1 || !errors.As(res.Problems[0], &prob) ||
		prob.Item != "EVIL" || prob.Reason != series.SkipUnrequested || !strings.Contains(prob.Detail, `"../../etc"`) {
		t.Errorf("unrequested %d, returned %d, kept %d, problems %v; want the ../../etc item dropped and named", res.Unrequested, res.Returned, len(cat.Items), res.Problems)
	}
	for _, it := range cat.Items {
		if it.Collection != "sentinel-2-l2a" {
			t.Errorf("item %s of collection %q kept", it.ID, it.Collection)
		}
	}
}

// TestSearchStall (issue 27 D10): a search answer that sends its headers
// and then stalls fails at the stall deadline (60 s, storage.RequestTimeout;
// 200 ms here) and is retried, instead of waiting the client's 5 minutes
// per attempt; one that stalls every time fails the search, transiently,
// after MaxAttempts.
func TestSearchStall(t *testing.T) {
	if storage.RequestTimeout != 60*time.Second {
		t.Errorf("stall deadline %s, docs/security.md promises 60 s", storage.RequestTimeout)
	}
	inner := stactest.New(t, days(3))
	var stalls atomic.Int32
	var always atomic.Bool
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/search" && (always.Load() || stalls.Load() == 0) {
			stalls.Add(1)
			w.Header().Set("Content-Type", "application/geo+json")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, `{"type":"FeatureCollection","features":[`)
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		proxyTo(w, r, inner.URL[:len(inner.URL)-len("/api")])
	}))
	defer srv.Close()
	c := &Client{Sleep: noSleep, stall: 200 * time.Millisecond}
	api := &API{Root: srv.URL + "/api", Search: srv.URL + "/api/search", Method: "POST"}
	t0 := time.Now()
	res, err := c.Search(context.Background(), api, Query{Collections: []string{"sentinel-2-l2a"}}, nil)
	if err != nil || len(res.Items) != 3 || res.Retries != 1 || time.Since(t0) > 5*time.Second {
		t.Fatalf("after one stalled answer: %v, %d items, %d retries in %s; want 3 items after one retry", err, len(res.Items), res.Retries, time.Since(t0))
	}
	always.Store(true)
	stalls.Store(0)
	t0 = time.Now()
	_, err = c.Search(context.Background(), api, Query{Collections: []string{"sentinel-2-l2a"}}, nil)
	if !errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), "answer stalled") || int(stalls.Load()) != MaxAttempts || time.Since(t0) > 10*time.Second {
		t.Errorf("always stalling: %v after %d attempts in %s; want ErrRetriesExhausted naming the stall after %d", err, stalls.Load(), time.Since(t0), MaxAttempts)
	}
}

// proxyTo forwards r to base (the stactest server) and copies its answer.
func proxyTo(w http.ResponseWriter, r *http.Request, base string) {
	body, _ := io.ReadAll(r.Body)
	req, _ := http.NewRequest(r.Method, base+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// TestRedirectToAnotherHost (issue 27 D18): a search answer redirecting
// (307, which re-sends the POST body) to another host — another loopback
// port — is refused, as a next link to another host is: the other host
// gets no request, the search fails for good (not retried) and the error
// holds nothing of the other host's answer. A redirect on the API's own
// host is still followed.
func TestRedirectToAnotherHost(t *testing.T) {
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "OTHER-HOST-SECRET-BODY", http.StatusBadRequest)
	}))
	defer other.Close()
	inner := stactest.New(t, days(2))
	var searches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/search":
			searches.Add(1)
			http.Redirect(w, r, other.URL+"/search", http.StatusTemporaryRedirect)
		case "/api/moved":
			http.Redirect(w, r, "/api/search2", http.StatusPermanentRedirect)
		case "/api/search2":
			r.URL.Path = "/api/search"
			proxyTo(w, r, inner.URL[:len(inner.URL)-len("/api")])
		}
	}))
	defer srv.Close()
	c := &Client{Sleep: noSleep}
	api := &API{Root: srv.URL + "/api", Search: srv.URL + "/api/search", Method: "POST"}
	_, err := c.Search(context.Background(), api, Query{Collections: []string{"sentinel-2-l2a"}}, nil)
	if err == nil || !errors.Is(err, ErrSearch) || errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), "redirect to another host refused") ||
		strings.Contains(err.Error(), "OTHER-HOST") || hits.Load() != 0 || searches.Load() != 1 {
		t.Errorf("redirect to %s: %v; other host hit %d times, %d searches; want refused at once, never reaching it", other.URL, err, hits.Load(), searches.Load())
	}
	api.Search = srv.URL + "/api/moved"
	res, err := c.Search(context.Background(), api, Query{Collections: []string{"sentinel-2-l2a"}}, nil)
	if err != nil || len(res.Items) != 2 {
		t.Errorf("redirect on the API's own host: %v, want it followed", err)
	}
}

// TestHTMLLandingPage (issue 27 D17): a root answering an HTML page (200)
// is not a STAC API, and says so, instead of being read as a static
// catalog and failing on its hrefs.
func TestHTMLLandingPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "\n<!doctype html><html><head><title>Portal</title></head><body>Welcome</body></html>")
	}))
	defer srv.Close()
	api, err := (&Client{}).Detect(context.Background(), srv.URL+"/")
	if api != nil || !errors.Is(err, ErrNotSTAC) || !strings.Contains(err.Error(), "not a STAC API") || strings.Contains(err.Error(), "Welcome") {
		t.Errorf("Detect: %v, %v; want ErrNotSTAC saying the root is not a STAC API", api, err)
	}
}

// TestFreezeLayout: Freeze streams the documents back from disk with the
// layout json.MarshalIndent gives the whole collection (HTML characters
// and line separators escaped as json.Marshal does), so frozen catalogs
// are byte-identical to those written before the documents left memory.
func TestFreezeLayout(t *testing.T) {
	docs := days(3)
	docs[1] = json.RawMessage(strings.Replace(string(docs[1]), `"properties":{`, `"properties":{"note":"a<b & c>d \u2028 é",  "n": [1, 2.50, {"x" :null}],`, 1))
	res := &Result{API: "https://x/api", Queries: []string{`{"limit":100}`}, Matched: 3}
	defer res.Close()
	for _, d := range docs {
		it, err := series.ParseItem(d, "https://x/api/search")
		if err != nil {
			t.Fatal(err)
		}
		if err := res.add(it, d); err != nil {
			t.Fatal(err)
		}
	}
	var got bytes.Buffer
	if err := Freeze(&got, res); err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(struct {
		Type     string            `json:"type"`
		Search   *Result           `json:"manejo:search"`
		Features []json.RawMessage `json:"features"`
	}{"FeatureCollection", res, docs}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if want = append(want, '\n'); !bytes.Equal(got.Bytes(), want) {
		t.Errorf("frozen:\n%s\nwant:\n%s", got.Bytes(), want)
	}
	var empty bytes.Buffer
	if err := Freeze(&empty, &Result{}); err != nil || !json.Valid(empty.Bytes()) || !strings.Contains(empty.String(), `"features": []`) {
		t.Errorf("empty freeze %s %v", empty.String(), err)
	}
}
