package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/stacapi"
	"github.com/manejo/manejo/stacapi/stactest"
)

// onHost is a copy of an archive item with a new id, its properties cut to
// its date (so that it is no other item's acquisition), and every asset
// href moved to base (an https:// URL prefix).
func onHost(t *testing.T, doc json.RawMessage, id, coll, base string) json.RawMessage {
	t.Helper()
	var f map[string]any
	if err := json.Unmarshal(doc, &f); err != nil {
		t.Fatal(err)
	}
	p := f["properties"].(map[string]any)
	f["id"], f["collection"], f["properties"] = id, coll, map[string]any{"datetime": p["datetime"], "proj:epsg": p["proj:epsg"]}
	for k, a := range f["assets"].(map[string]any) {
		a.(map[string]any)["href"] = base + "/" + k + ".tif"
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostileArchive (issue 27 D7, D8, D9) runs against a STAC API on
// loopback serving the synthetic archive, in which:
//   - three scenes' hrefs point at an HTTPS server that never completes a
//     handshake (D7): they are retried and counted transient, the talhões
//     they cover incomplete with no payload — never read without them;
//   - every page carries an item of collection "../../etc", not asked for
//     (D9): dropped and counted, not a configuration error;
//   - an item on an allowed Planetary Computer account whose SAS endpoint
//     answers 404, and one on an account the href rules refuse (D8): the
//     first scene is skipped as "access", the second as bad-href with no
//     token asked for its account; the run goes on.
func TestHostileArchive(t *testing.T) {
	dir := archive(t)
	items := archiveItems(t, dir)
	silent := "https://" + testkit.NoHandshakeServer(t)
	var slow []string
	for i := len(items) - 1; i >= 0 && len(slow) < 3; i-- {
		var f struct {
			ID         string
			Properties struct{ Datetime time.Time }
		}
		if err := json.Unmarshal(items[i], &f); err != nil {
			t.Fatal(err)
		}
		if f.Properties.Datetime.Before(time.Date(2026, 7, 31, 0, 0, 0, 0, time.UTC)) {
			items[i] = onHost(t, items[i], f.ID, "sentinel-2-l2a", silent+"/"+f.ID)
			slow = append(slow, f.ID)
		}
	}
	var mu sync.Mutex
	var tokens []string
	sas := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tokens = append(tokens, r.URL.Path)
		mu.Unlock()
		http.Error(w, `{"message":"no such account"}`, http.StatusNotFound)
	}))
	defer sas.Close()
	srv := stactest.New(t, items)
	srv.Inject = []json.RawMessage{
		onHost(t, items[0], "ETC", "../../etc", "https://sentinel-cogs.s3.us-west-2.amazonaws.com/etc"),
		onHost(t, items[0], "PC-404", "sentinel-2-l2a", "https://pcacct.blob.core.windows.net/cogs/x"),
		onHost(t, items[0], "PC-REFUSED", "sentinel-2-l2a", "https://attacker.blob.core.windows.net/loot/x"),
	}
	for k, v := range map[string]string{"GDAL_HTTP_CONNECTTIMEOUT": "1", "GDAL_HTTP_TIMEOUT": "1", "GDAL_HTTP_MAX_RETRY": "0"} {
		t.Setenv(k, v)
	}
	out := t.TempDir()
	cfg := baseConfig(t, dir, out)
	cfg.Catalog, cfg.Collections = srv.URL, []string{"sentinel-2-l2a"}
	cfg.AllowHrefPrefix = []string{dir, silent + "/", "https://pcacct.blob.core.windows.net/cogs/"}
	cfg.STAC, cfg.Access = &stacapi.Client{Limit: 50}, &stacapi.Access{PCTokenURL: sas.URL, PCSubscriptionKey: "pc-key-9"}
	cfg.SceneAttempts, cfg.SceneRetryDelay = 2, 10*time.Millisecond
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v; want the run to go on", err)
	}
	m, err := readManifest(context.Background(), filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary %+v; skipped %v; tokens asked %v", sum, m.Skipped, tokens)
	// D7: the three scenes are transient, never unreadable; the talhões
	// incomplete, naming them, with no payload.
	if m.Skipped["transient"] < 3 || m.Skipped["unreadable"] != 0 || sum.Incomplete != 6 || sum.Payloads != 0 {
		t.Errorf("skipped %v, summary %+v: want the 3 scenes transient and the 6 readable talhões incomplete, no payload", m.Skipped, sum)
	}
	for _, f := range m.Failures {
		if f.Status == export.StatusIncomplete && !strings.Contains(f.Reason, slow[0]) {
			t.Errorf("incomplete %s does not name %s: %s", f.FieldID, slow[0], f.Reason)
		}
	}
	for _, id := range []string{"T1", "T2"} {
		if _, err := os.Stat(filepath.Join(out, sinm.PayloadName(id))); err == nil {
			t.Errorf("payload written for %s", id)
		}
	}
	// D9: the unrequested item is dropped and counted.
	if m.CatalogSearch == nil || m.CatalogSearch.Unrequested == 0 || !warned(m.Warnings, "ETC", `"../../etc" was not asked for`) {
		t.Errorf("catalog_search %+v, warnings: want the ../../etc item dropped and named", m.CatalogSearch)
	}
	// D8: token requests for the allowed account only, one per signing
	// (when the catalog is read, once for the read pass's one group of
	// neighbours — the catalog is remote, so the pass is on — and again
	// before each of the 3 batches);
	// its 404 skips that scene in each batch; the refused account is never
	// asked for.
	for _, p := range tokens {
		if p != "/token/pcacct/cogs" {
			t.Errorf("token asked for %s", p)
		}
	}
	if len(tokens) != 5 || m.Skipped["access"] < 1 || m.Skipped["bad-href"] < 1 ||
		!warned(m.Warnings, "PC-404", "HTTP 404") || !warned(m.Warnings, "PC-REFUSED", "outside the allowed prefixes") {
		t.Errorf("token requests %v, skipped %v: want 5 for pcacct/cogs, PC-404 skipped as access, PC-REFUSED as bad-href", tokens, m.Skipped)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "run.json")); strings.Contains(string(b), "pc-key-9") {
		t.Error("run.json holds the subscription key")
	}
}

// warned reports whether a warning names id and says what.
func warned(ws []string, id, what string) bool {
	for _, w := range ws {
		if strings.Contains(w, id) && strings.Contains(w, what) {
			return true
		}
	}
	return false
}

// TestHTMLCatalogRoot (issue 27 D17): --catalog naming a web page (an
// HTML landing page answered 200) is a configuration error saying the root
// is not a STAC API, not "bad asset href: use https://".
func TestHTMLCatalogRoot(t *testing.T) {
	dir := archive(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html><html><body><h1>Geoportal</h1></body></html>")
	}))
	defer srv.Close()
	cfg := baseConfig(t, dir, t.TempDir())
	cfg.Catalog = srv.URL + "/"
	_, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrConfig) || !errors.Is(err, stacapi.ErrNotSTAC) || !strings.Contains(err.Error(), "not a STAC API") || strings.Contains(err.Error(), "use https") {
		t.Errorf("Run: %v; want a configuration error saying the root is not a STAC API", err)
	}
}
