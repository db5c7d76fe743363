package stacapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manejo/manejo/series"
)

// tokenServer is a local Planetary Computer SAS token endpoint: each
// answer is a new token expiring TTL after the server's clock.
type tokenServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
	keys  []string
	now   func() time.Time
	ttl   time.Duration
	fail  int // answer the next fail requests 503 with Retry-After: 1
}

func newTokenServer(t *testing.T) *tokenServer {
	ts := &tokenServer{now: time.Now, ttl: time.Hour}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		if ts.fail > 0 {
			ts.fail--
			w.Header().Set("Retry-After", "1")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		ts.paths = append(ts.paths, r.URL.Path)
		ts.keys = append(ts.keys, r.Header.Get("Ocp-Apim-Subscription-Key"))
		n := len(ts.paths) - 1
		_ = json.NewEncoder(w).Encode(map[string]any{"msft:expiry": ts.now().Add(ts.ttl).UTC().Format(time.RFC3339), "token": ts.tokenLocked(n)})
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) tokenLocked(n int) string {
	return fmt.Sprintf("st=2026-12-01&se=2026-12-02&sp=rl&sv=2024-05-04&sr=c&skoid=x&sig=token%d", n)
}

func (ts *tokenServer) token(n int) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.tokenLocked(n)
}

func (ts *tokenServer) count() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.paths)
}

func blobItem(id, href string) *series.Item {
	return &series.Item{ID: id, Collection: "sentinel-2-l2a", Assets: map[string]series.Asset{"B04": {Href: href, Band: 1}}}
}

// TestSASSigning: tokens are fetched per account/container, cached while
// they have more than RefreshBefore (15 min) to live, and fetched again
// after; a token endpoint answering 503 with Retry-After is retried; an
// href already signed is left alone; hrefs on other hosts are not signed.
func TestSASSigning(t *testing.T) {
	ts := newTokenServer(t)
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ts.now = func() time.Time { return clock }
	acc := &Access{PCTokenURL: ts.URL + "/api/sas/v1", HTTP: ts.Client(), Now: func() time.Time { return clock }}
	const a = "https://sentinel2l2a01.blob.core.windows.net/sentinel2-l2/21/L/XG/2024/01/01/S2A/B04.tif"
	const b = "https://landsateuwest.blob.core.windows.net/landsat-c2/level-2/x/red.tif"
	sign := func(href string) string {
		t.Helper()
		it := blobItem("x", href)
		if err := acc.Apply(context.Background(), []*series.Item{it}); err != nil {
			t.Fatal(err)
		}
		return it.Assets["B04"].Href
	}
	steps := []struct {
		at        time.Duration
		href      string
		want      string
		fetches   int
		whyCached string
	}{
		{0, a, a + "?" + ts.token(0), 1, "first use: fetched"},
		{30 * time.Minute, a, a + "?" + ts.token(0), 1, "30 min left of 60: cached"},
		{30 * time.Minute, b, b + "?" + ts.token(1), 2, "another account/container: its own token"},
		{46 * time.Minute, a, a + "?" + ts.token(2), 3, "14 min left (< RefreshBefore): fetched again"},
		{50 * time.Minute, a, a + "?" + ts.token(2), 3, "the new token lives until 1 h 46: cached"},
		{50 * time.Minute, a + "?se=x&sig=y", a + "?se=x&sig=y", 3, "already signed: left alone"},
		{50 * time.Minute, "https://sentinel-cogs.s3.us-west-2.amazonaws.com/x/B04.tif", "https://sentinel-cogs.s3.us-west-2.amazonaws.com/x/B04.tif", 3, "not a blob: not signed"},
	}
	start := clock
	for _, s := range steps {
		clock = start.Add(s.at)
		if got := sign(s.href); got != s.want || ts.count() != s.fetches {
			t.Errorf("%s: %s, %d token requests; want %s, %d", s.whyCached, got, ts.count(), s.want, s.fetches)
		}
	}
	// Signing again (the next batch) replaces a token handed out here
	// by the current one: at 2 h the token of 0:46 has lapsed.
	it := blobItem("x", a)
	clock = start.Add(50 * time.Minute)
	if err := acc.Apply(context.Background(), []*series.Item{it}); err != nil {
		t.Fatal(err)
	}
	clock = start.Add(2 * time.Hour)
	if err := acc.Apply(context.Background(), []*series.Item{it}); err != nil {
		t.Fatal(err)
	}
	if got := it.Assets["B04"].Href; got != a+"?"+ts.token(3) || ts.count() != 4 {
		t.Errorf("re-signed at 2 h: %s (%d token requests), want the fresh token %s", got, ts.count(), ts.token(3))
	}
	if ts.paths[0] != "/api/sas/v1/token/sentinel2l2a01/sentinel2-l2" || ts.paths[1] != "/api/sas/v1/token/landsateuwest/landsat-c2" {
		t.Errorf("token paths %v", ts.paths)
	}
	// A busy token endpoint is waited for, not turned into unsigned reads.
	ts.fail = 1
	clock = start.Add(3 * time.Hour)
	t0 := time.Now()
	if got := sign(a); got != a+"?"+ts.token(4) || time.Since(t0) < time.Second {
		t.Errorf("after a 503 with Retry-After: 1: %s after %v; want a fresh token after ≥ 1 s", got, time.Since(t0))
	}
}

// TestSASEndpointDown: a token endpoint that keeps failing fails Apply,
// naming the item, instead of leaving unsigned hrefs to be read as missing
// scenes.
func TestSASEndpointDown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer srv.Close()
	acc := &Access{PCTokenURL: srv.URL, HTTP: srv.Client()}
	err := acc.Apply(context.Background(), []*series.Item{blobItem("S2B_X", "https://a.blob.core.windows.net/c/x.tif")})
	if err == nil || !strings.Contains(err.Error(), "item S2B_X") || !strings.Contains(err.Error(), "HTTP 403") {
		t.Errorf("Apply: %v; want an error naming the item and the 403", err)
	}
}

// TestSubscriptionKeyNotRedirected: a token endpoint that redirects to
// another host does not get the subscription key forwarded there.
func TestSubscriptionKeyNotRedirected(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Ocp-Apim-Subscription-Key"))
		mu.Unlock()
		fmt.Fprint(w, `{"msft:expiry":"2099-01-01T00:00:00Z","token":"se=2099&sig=x"}`)
	}))
	defer other.Close()
	var got string
	tok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Ocp-Apim-Subscription-Key")
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer tok.Close()
	acc := &Access{PCTokenURL: tok.URL, PCSubscriptionKey: "secret-key"}
	it := blobItem("x", "https://a.blob.core.windows.net/c/x.tif")
	if err := acc.Apply(context.Background(), []*series.Item{it}); err != nil {
		t.Fatal(err)
	}
	if got != "secret-key" || len(seen) != 1 || seen[0] != "" || !strings.HasSuffix(it.Assets["B04"].Href, "?se=2099&sig=x") {
		t.Errorf("token endpoint got key %q; redirected host got %q; href %s — want the key at the endpoint only", got, seen, it.Assets["B04"].Href)
	}
}
