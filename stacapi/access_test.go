package stacapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
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

// blobAllow are the href rules of the access tests: the two Planetary
// Computer containers and Earth Search's bucket.
var blobAllow = []string{"https://sentinel2l2a01.blob.core.windows.net/sentinel2-l2/", "https://landsateuwest.blob.core.windows.net/landsat-c2/",
	"https://a.blob.core.windows.net/c/", "https://sentinel-cogs.s3.us-west-2.amazonaws.com/"}

// apply runs acc.Apply on a catalog of items under blobAllow.
func apply(t *testing.T, acc *Access, items ...*series.Item) {
	t.Helper()
	cat, err := series.NewCatalog(items, "https://planetarycomputer.microsoft.com/api/stac/v1", blobAllow)
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.Apply(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
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
		apply(t, acc, it)
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
	apply(t, acc, it)
	clock = start.Add(2 * time.Hour)
	apply(t, acc, it)
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

// TestSASEndpointDown (issue 27 D8): a token endpoint that refuses (403)
// marks the assets of its container, naming the answer, and Apply goes
// on: their scenes are skipped (series.SkipAccess), never read unsigned
// as missing scenes, and the rest of the catalog is read. One that keeps
// failing with 503 marks them transient (their talhões incomplete), and is
// asked once per container and call, not once per asset.
func TestSASEndpointDown(t *testing.T) {
	var calls atomic.Int32
	status := http.StatusForbidden
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "forbidden", status)
	}))
	defer srv.Close()
	acc := &Access{PCTokenURL: srv.URL, HTTP: srv.Client(), sleep: func(context.Context, time.Duration) error { return nil }}
	items := []*series.Item{blobItem("S2B_X", "https://a.blob.core.windows.net/c/x.tif"), blobItem("S2B_Y", "https://a.blob.core.windows.net/c/y.tif"),
		blobItem("S2B_Z", "https://sentinel-cogs.s3.us-west-2.amazonaws.com/z/B04.tif")}
	apply(t, acc, items...)
	for _, it := range items[:2] {
		e := it.Assets["B04"].AccessErr
		if e == nil || e.Transient || !strings.Contains(e.Detail, "HTTP 403") || strings.Contains(it.Assets["B04"].Href, "?") {
			t.Errorf("%s: access error %+v, href %s; want the 403, not transient, unsigned", it.ID, e, it.Assets["B04"].Href)
		}
	}
	if e := items[2].Assets["B04"].AccessErr; e != nil || calls.Load() != 1 {
		t.Errorf("other host: access error %v; %d token requests: want none for it and one for the container", e, calls.Load())
	}
	status = http.StatusServiceUnavailable
	calls.Store(0)
	apply(t, acc, items...)
	if e := items[0].Assets["B04"].AccessErr; e == nil || !e.Transient || int(calls.Load()) != MaxAttempts {
		t.Errorf("503 throughout: access error %+v after %d requests; want transient after %d", e, calls.Load(), MaxAttempts)
	}
}

// TestSubscriptionKeyNotRedirected (issue 27 D8, D18): a token endpoint
// that redirects to another host is refused: the other host is never
// asked (the key would follow a custom header, the answer would be taken
// as a token), and the scene is marked rather than signed by it.
func TestSubscriptionKeyNotRedirected(t *testing.T) {
	var seen atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		fmt.Fprint(w, `{"msft:expiry":"2099-01-01T00:00:00Z","token":"se=2099&sig=x"}`)
	}))
	defer other.Close()
	var mu sync.Mutex
	var got string
	tok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Get("Ocp-Apim-Subscription-Key")
		mu.Unlock()
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer tok.Close()
	acc := &Access{PCTokenURL: tok.URL, PCSubscriptionKey: "secret-key"}
	it := blobItem("x", "https://a.blob.core.windows.net/c/x.tif")
	apply(t, acc, it)
	e := it.Assets["B04"].AccessErr
	if got != "secret-key" || seen.Load() != 0 || e == nil || !strings.Contains(e.Detail, "redirect to another host refused") || strings.Contains(it.Assets["B04"].Href, "sig=") {
		t.Errorf("token endpoint got key %q; other host asked %d times; access error %v; href %s — want the key at the endpoint only, the redirect refused", got, seen.Load(), e, it.Assets["B04"].Href)
	}
}

// TestSigningAfterHrefRules (issue 27 D8): the href rules come first. A
// catalog item on an account the rules refuse is never signed and no token
// is asked for it (the subscription key never goes to the endpoint for an
// account the catalog chose); the allowed one is signed. A refusal whose
// body echoes the subscription key does not pass the key on.
func TestSigningAfterHrefRules(t *testing.T) {
	ts := newTokenServer(t)
	acc := &Access{PCTokenURL: ts.URL, HTTP: ts.Client(), PCSubscriptionKey: "sub-key-7"}
	good := blobItem("good", "https://sentinel2l2a01.blob.core.windows.net/sentinel2-l2/x/B04.tif")
	evil := blobItem("evil", "https://attacker.blob.core.windows.net/loot/x/B04.tif")
	apply(t, acc, good, evil)
	if ts.count() != 1 || ts.paths[0] != "/token/sentinel2l2a01/sentinel2-l2" {
		t.Errorf("token requests %v; want one, for the allowed account", ts.paths)
	}
	if h := evil.Assets["B04"].Href; h != "https://attacker.blob.core.windows.net/loot/x/B04.tif" || evil.Assets["B04"].AccessErr != nil {
		t.Errorf("refused item: href %s, access error %v; want it untouched", h, evil.Assets["B04"].AccessErr)
	}
	if h := good.Assets["B04"].Href; !strings.HasSuffix(h, "?"+ts.token(0)) {
		t.Errorf("allowed item: href %s, want signed", h)
	}
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such account; key "+r.Header.Get("Ocp-Apim-Subscription-Key"), http.StatusNotFound)
	}))
	defer echo.Close()
	acc = &Access{PCTokenURL: echo.URL, HTTP: echo.Client(), PCSubscriptionKey: "sub-key-7"}
	good = blobItem("good", "https://sentinel2l2a01.blob.core.windows.net/sentinel2-l2/x/B04.tif")
	apply(t, acc, good)
	if e := good.Assets["B04"].AccessErr; e == nil || !strings.Contains(e.Detail, "HTTP 404") || strings.Contains(e.Detail, "sub-key-7") {
		t.Errorf("echoing 404: access error %v; want the 404 without the key", e)
	}
}
