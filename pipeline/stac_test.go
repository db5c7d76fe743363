package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/stacapi"
	"github.com/manejo/manejo/stacapi/stactest"
)

// archiveItems are the synthetic archive's items with their asset hrefs
// made absolute, as an API serves them.
func archiveItems(t *testing.T, dir string) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Features []map[string]any `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	for _, f := range fc.Features {
		for _, a := range f["assets"].(map[string]any) {
			a := a.(map[string]any)
			if h := a["href"].(string); !filepath.IsAbs(h) {
				a["href"] = filepath.Join(dir, h)
			}
		}
		d, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// TestRunAgainstSTACAPI: `manejo run --catalog <API root>` against a STAC
// API on loopback serving the synthetic archive (pages of 10 items, the
// last item of page 1 repeated on page 2, a 429 with Retry-After: 1 on page
// 3) writes byte for byte the datasets and payloads of the run on the
// static catalog; the frozen catalog/items.json, passed back as --catalog,
// does too. run.json records the API, the query, the pages, the duplicate
// and the retry.
func TestRunAgainstSTACAPI(t *testing.T) {
	t.Parallel()
	dir := archive(t)
	ref, _ := reference(t)
	bin := manejoBinary(t)
	items := archiveItems(t, dir)
	srv := stactest.New(t, append(items, demItem(t, dir, items)))
	srv.Duplicate, srv.Throttle = true, map[int]bool{3: true}

	out := t.TempDir()
	args := runArgs(dir, out, "--collections", "sentinel-2-l2a", "--allow-href-prefix", dir)
	setFlag(args, "--catalog", srv.URL)
	setFlag(args, "--dem", "stac:synth-dem") // the same dem.tif, found by search and read as a mosaic
	run := func(args []string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		if b, err := cmd.CombinedOutput(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 { // 3: some talhões failed (BAD-BOWTIE), as in the reference
				t.Fatalf("manejo %v: %v\n%s", args, err, b)
			}
		}
	}
	run(args)
	want := testkit.HashTree(t, ref, "run.json", "run/")
	sameTree(t, "run against the STAC API", want, testkit.HashTree(t, out, "run.json", "run/", "catalog/"))

	m := readJSON(t, filepath.Join(out, "run.json"))
	cs, ok := m["catalog_search"].(map[string]any)
	if !ok {
		t.Fatalf("run.json has no catalog_search: %v", m)
	}
	t.Logf("catalog_search: %v; %d output files compared", cs, len(testkit.HashTree(t, ref, "run.json", "run/")))
	kept := int(cs["kept"].(float64))
	pages := int(cs["pages"].(float64))
	if cs["api"] != srv.URL || cs["method"] != "POST" || cs["duplicates"] != 1.0 || cs["retries"] != 1.0 ||
		int(cs["returned"].(float64)) != kept+1 || pages != (kept+9)/10 || int(cs["matched"].(float64)) != kept || cs["frozen"] != "catalog/items.json" {
		t.Errorf("catalog_search = %v; want api %s, POST, 1 duplicate, 1 retry, returned = kept+1, ceil(kept/10) pages", cs, srv.URL)
	}
	if len(srv.Throttled) != 1 || len(srv.Retried) != 1 || srv.Retried[0].Sub(srv.Throttled[0]).Seconds() < 1 {
		t.Errorf("throttled %v, retried %v: want one 429 and its retry at least Retry-After = 1 s later", srv.Throttled, srv.Retried)
	}
	if kept < 50 {
		t.Errorf("kept %d items, want the archive's scenes over the talhões", kept)
	}

	ds, ok := m["dem_search"].(map[string]any)
	if !ok || fmt.Sprint(ds["tiles"]) != "[synth-dem/synth-dem]" || ds["pages"] != 1.0 {
		t.Errorf("dem_search = %v, want the one tile synth-dem found on one page", m["dem_search"])
	}

	// The frozen catalog reproduces the run.
	out2 := t.TempDir()
	args2 := runArgs(dir, out2, "--allow-href-prefix", dir)
	setFlag(args2, "--catalog", filepath.Join(out, "catalog", "items.json"))
	run(args2)
	sameTree(t, "run on the frozen catalog", want, testkit.HashTree(t, out2, "run.json", "run/"))
}

// demItem is a DEM item for the archive's dem.tif, collection synth-dem,
// its bbox the union of the scenes' (the synthetic DEM covers the scene).
func demItem(t *testing.T, dir string, items []json.RawMessage) json.RawMessage {
	t.Helper()
	b := []float64{180, 90, -180, -90}
	for _, d := range items {
		var f struct{ BBox []float64 }
		if err := json.Unmarshal(d, &f); err != nil {
			t.Fatal(err)
		}
		b[0], b[1], b[2], b[3] = min(b[0], f.BBox[0]), min(b[1], f.BBox[1]), max(b[2], f.BBox[2]), max(b[3], f.BBox[3])
	}
	doc, err := json.Marshal(map[string]any{"type": "Feature", "id": "synth-dem", "collection": "synth-dem", "bbox": b,
		"properties": map[string]any{"datetime": "2000-02-11T00:00:00Z"},
		"assets":     map[string]any{"data": map[string]any{"href": filepath.Join(dir, "dem.tif")}}})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// setFlag replaces the value of a flag in args.
func setFlag(args []string, name, v string) {
	for i := range args[:len(args)-1] {
		if args[i] == name {
			args[i+1] = v
		}
	}
}

// TestAllowMissingQA: the synthetic catalog without its SCL assets. Without
// --allow-missing-qa every scene is skipped (missing-asset), as before;
// with it the scenes are read unmasked, every observation read is flagged
// no-qa in observations.parquet, and run.json records the choice.
func TestAllowMissingQA(t *testing.T) {
	t.Parallel()
	dir := archive(t)
	tmp := t.TempDir()
	var feats []map[string]any
	for _, d := range archiveItems(t, dir) {
		var f map[string]any
		if err := json.Unmarshal(d, &f); err != nil {
			t.Fatal(err)
		}
		delete(f["assets"].(map[string]any), "scl")
		feats = append(feats, f)
	}
	b, _ := json.Marshal(map[string]any{"type": "FeatureCollection", "features": feats})
	cat := filepath.Join(tmp, "catalog.json")
	if err := os.WriteFile(cat, b, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(allow []string) (string, map[string]any) {
		out := t.TempDir()
		cfg := baseConfig(t, dir, out)
		cfg.Catalog, cfg.AllowHrefPrefix, cfg.AllowMissingQA = cat, []string{dir}, allow
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		return out, readJSON(t, filepath.Join(out, "run.json"))
	}
	_, m := run(nil)
	if sk := m["skipped_scenes"].(map[string]any); sk["missing-asset"] == nil || m["parameters"].(map[string]any)["allow-missing-qa"] != nil {
		t.Errorf("without the flag: skipped %v; want scenes skipped as missing-asset", sk)
	}
	out, m := run([]string{"sentinel-2-l2a"})
	if m["parameters"].(map[string]any)["allow-missing-qa"] != "sentinel-2-l2a" {
		t.Errorf("parameters %v: want allow-missing-qa recorded", m["parameters"])
	}
	obs, err := export.ReadDataset[export.ObsRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	flagged, valued, withFractions := 0, 0, 0
	for _, o := range obs {
		if o.MaskReason != nil && *o.MaskReason == "no-qa" {
			flagged++
			if o.NDVI != nil {
				valued++
			}
			if o.NDTI != nil && o.StrawPct != nil {
				withFractions++
			}
		} else if o.MaskReason == nil {
			t.Errorf("observation %s %s %v: not flagged although its scene had no QA", o.FieldID, o.CellID, o.Date)
			break
		}
	}
	if flagged == 0 || valued != flagged {
		t.Errorf("%d observations flagged no-qa, %d with NDVI; want all read ones flagged, values kept", flagged, valued)
	}
	if withFractions == 0 {
		t.Errorf("no no-qa observation got green/straw/soil fractions: flagged rows are analysed like clear ones")
	}
	t.Logf("%d observations, %d flagged no-qa, %d of them with straw fractions", len(obs), flagged, withFractions)
}

// TestSearchFailure: an API whose search keeps answering 503 through every
// retry (each wait the answer's Retry-After) makes every talhão of the
// shard incomplete — no rows, no payload, never an empty series taken as
// real — with the search's error in run.json; an API answering 400 (a bad
// query, no use retrying) stops the run with ErrCatalogSearch instead.
func TestSearchFailure(t *testing.T) {
	t.Parallel()
	dir := archive(t)
	var searches atomic.Int32
	status := http.StatusServiceUnavailable
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" {
			searches.Add(1)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "unavailable", status)
			return
		}
		fmt.Fprint(w, `{"type":"Catalog","conformsTo":["https://api.stacspec.org/v1.0.0/item-search"],"links":[{"rel":"search","method":"POST","href":"/search"}]}`)
	}))
	defer srv.Close()
	out := t.TempDir()
	cfg := baseConfig(t, dir, out)
	var waits []time.Duration
	cfg.Catalog, cfg.Collections, cfg.AllowHrefPrefix = srv.URL+"/", []string{"sentinel-2-l2a"}, []string{dir}
	cfg.STAC = &stacapi.Client{Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v; want the run to finish with incomplete talhões", err)
	}
	if int(searches.Load()) != stacapi.MaxAttempts || len(waits) != stacapi.MaxAttempts-1 || waits[0] != time.Second {
		t.Errorf("%d search requests, waits %v; want %d attempts, each wait the Retry-After of 1 s", searches.Load(), waits, stacapi.MaxAttempts)
	}
	if sum.Incomplete != 6 || sum.OK+sum.Partial != 0 || sum.Payloads != 0 {
		t.Errorf("summary %+v: want the 6 readable talhões incomplete, none ok, no payload", sum)
	}
	m := readJSON(t, filepath.Join(out, "run.json"))
	cs, _ := m["catalog_search"].(map[string]any)
	if e, _ := cs["error"].(string); !strings.Contains(e, "HTTP 503") {
		t.Errorf("catalog_search %v: want the 503 recorded", cs)
	}
	n := 0
	for _, f := range m["failures"].([]any) {
		f := f.(map[string]any)
		if f["status"] == "incomplete" && strings.Contains(f["reason"].(string), "STAC API search") {
			if n == 0 {
				t.Logf("reason: %s", f["reason"])
			}
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d talhões incomplete because of the search, want 6 (failures %v)", n, m["failures"])
	}
	obs, err := export.ReadDataset[export.ObsRow](os.DirFS(out))
	if err == nil && len(obs) != 0 {
		t.Errorf("%d observation rows written by a run whose search failed", len(obs))
	}

	status = http.StatusBadRequest
	cfg.Out = t.TempDir()
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrCatalogSearch) || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("a 400: Run error %v; want ErrCatalogSearch naming it", err)
	}
}

// TestFrozenName: one frozen catalog per shard, named like the datasets'
// parts, never a path with the shard's "i/n".
func TestFrozenName(t *testing.T) {
	for s, want := range map[Shard]string{All: "catalog/items.json", {Index: 2, Count: 4}: "catalog/items-part-00002-of-00004.json"} {
		if got := frozenName(s); got != want {
			t.Errorf("frozenName(%v) = %s, want %s", s, got, want)
		}
	}
}
