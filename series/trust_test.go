package series

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/internal/testkit"
)

// TestHrefBypasses: each --allow-href-prefix bypass of issue 19 (defect 2)
// is refused, and what should pass passes.
func TestHrefBypasses(t *testing.T) {
	root := t.TempDir()
	prefix := filepath.Join(root, "archive")
	for _, d := range []string{prefix, filepath.Join(root, "elsewhere"), filepath.Join(root, "archive-evil")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"archive/red.tif", "elsewhere/red.tif", "archive-evil/red.tif"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("II*\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink inside the archive to a file outside it.
	if err := os.Symlink(filepath.Join(root, "elsewhere", "red.tif"), filepath.Join(prefix, "link.tif")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, href string
		allow      []string
		ok         bool
	}{
		{"inside", prefix + "/red.tif", []string{prefix}, true},
		{"inside, prefix with slash", prefix + "/red.tif", []string{prefix + "/"}, true},
		{"file:// inside", "file://" + prefix + "/red.tif", []string{prefix}, true},
		{"dot-dot to a sibling", prefix + "/../elsewhere/red.tif", []string{prefix}, false},
		{"dot-dot to /etc/passwd", prefix + "/../../../../../../../etc/passwd", []string{prefix}, false},
		{"file:// dot-dot", "file://" + prefix + "/../etc/shadow", []string{prefix}, false},
		{"file:// with a host", "file://other" + prefix + "/red.tif", []string{prefix}, false},
		{"symlink out of the archive", prefix + "/link.tif", []string{prefix}, false},
		{"prefix without slash, sibling -evil", root + "/archive-evil/red.tif", []string{prefix}, false},
		{"userinfo: host:port@other", "https://data.example:8443@evil.example:8443/red.tif", []string{"https://data.example:8443"}, false},
		{"other port", "https://data.example:9443/red.tif", []string{"https://data.example:8443"}, false},
		{"https inside", "https://data.example:8443/a/red.tif?sig=1", []string{"https://data.example:8443"}, true},
		{"https default port", "https://DATA.example:443/a/red.tif", []string{"https://data.example/a"}, true},
		{"https dot-dot out of the path", "https://data.example/a/../b/red.tif", []string{"https://data.example/a"}, false},
		{"https encoded dot-dot", "https://data.example/a/%2e%2e/b/red.tif", []string{"https://data.example/a"}, false},
		{"s3 other bucket", "s3://other/a/red.tif", []string{"s3://archive/"}, false},
		{"s3 bucket name prefix", "s3://archive-evil/a/red.tif", []string{"s3://archive"}, false},
		{"s3 inside", "s3://archive/a/red.tif", []string{"s3://archive"}, true},
		{"http refused", "http://data.example/a/red.tif", []string{"http://data.example/"}, false},
		{"vsi path", "/vsicurl/https://data.example/red.tif", []string{"/vsicurl/"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := parseRules(tc.allow)
			if err != nil {
				if tc.ok {
					t.Fatalf("parseRules(%v): %v", tc.allow, err)
				}
				return // the prefix itself is refused
			}
			p, err := gdalPath(tc.href, rules)
			if tc.ok && err != nil {
				t.Fatalf("gdalPath(%s) under %v: %v", tc.href, tc.allow, err)
			}
			if !tc.ok && err == nil {
				t.Fatalf("gdalPath(%s) under %v = %s, want refused", tc.href, tc.allow, p)
			}
			if err != nil && !errors.Is(err, errBadHref) {
				t.Fatalf("error %v does not wrap errBadHref", err)
			}
		})
	}
}

// TestDefaultHrefRule: with no prefix, a local catalog admits files under
// its own folder only, an s3:// catalog its own bucket only.
func TestDefaultHrefRule(t *testing.T) {
	dir := t.TempDir()
	rules, err := hrefRules(filepath.Join(dir, "catalog.json"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for href, ok := range map[string]bool{
		filepath.Join(dir, "a", "red.tif"): true, "/etc/passwd": false, filepath.Join(dir, "..", "x.tif"): false,
		"s3://bucket/red.tif": false, "https://example.com/red.tif": false,
	} {
		if _, err := gdalPath(href, rules); (err == nil) != ok {
			t.Errorf("local catalog, href %s: error %v, want admitted %v", href, err, ok)
		}
	}
	rules, err = hrefRules("s3://archive/stac/catalog.json", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for href, ok := range map[string]bool{"s3://archive/cogs/red.tif": true, "s3://other/red.tif": false, filepath.Join(dir, "red.tif"): false} {
		if _, err := gdalPath(href, rules); (err == nil) != ok {
			t.Errorf("s3 catalog, href %s: error %v, want admitted %v", href, err, ok)
		}
	}
}

// oneScene writes a catalog of one Sentinel-2 scene whose assets are
// local files, with the hrefs of the keys in hrefs replaced; it returns
// the catalog path and the talhão.
func oneScene(t *testing.T, hrefs map[string]string) (string, grid.Grid) {
	t.Helper()
	dir := t.TempDir()
	it, pts := s2Spec(4, 1200).build(t, dir, "s", "2024-01-01T13:00:00Z")
	for k, h := range hrefs {
		it["assets"].(map[string]any)[k] = map[string]any{"href": h}
	}
	writeJSON(t, filepath.Join(dir, "catalog.json"), collection(it))
	return filepath.Join(dir, "catalog.json"), fieldAround("f", 0.0002, pts...)
}

// sampleWithin runs Sample and fails the test when it does not return
// within limit.
func sampleWithin(t *testing.T, ctx context.Context, limit time.Duration, cat *Catalog, g grid.Grid, o Options) ([]Obs, Stats, error) {
	t.Helper()
	type out struct {
		obs []Obs
		st  Stats
		err error
	}
	ch := make(chan out, 1)
	go func() {
		obs, st, err := Sample(ctx, cat, []grid.Grid{g}, o)
		ch <- out{obs, st, err}
	}()
	select {
	case r := <-ch:
		return r.obs, r.st, r.err
	case <-time.After(limit):
		t.Fatalf("Sample still running after %s", limit)
	}
	return nil, Stats{}, nil
}

// TestVRTNotFollowed: a VRT inside the allowed folder (even named .tif)
// is not opened, so the URL it names is never requested.
func TestVRTNotFollowed(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	path, g := oneScene(t, nil)
	vrt := fmt.Sprintf(`<VRTDataset rasterXSize="16" rasterYSize="16"><SRS>EPSG:32721</SRS><GeoTransform>600000,10,0,8700000,0,-10</GeoTransform>
<VRTRasterBand dataType="UInt16" band="1"><SimpleSource><SourceFilename relativeToVRT="0">/vsicurl/%s/secret.tif</SourceFilename><SourceBand>1</SourceBand></SimpleSource></VRTRasterBand></VRTDataset>`, srv.URL)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "s_red.tif"), []byte(vrt), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, errs := LoadCatalog(context.Background(), path, CatalogOptions{})
	if cat == nil {
		t.Fatal(errs)
	}
	_, st, err := sampleWithin(t, context.Background(), 30*time.Second, cat, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.ScenesRead != 0 || len(st.Problems) != 1 || st.Problems[0].Asset != "red" {
		t.Errorf("stats %+v, want the scene skipped at its red asset", st)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the VRT made GDAL request its source %d times", n)
	}
}

// TestFIFOHref: an href naming a FIFO is refused before it is opened
// (opening it would block forever: defect 1).
func TestFIFOHref(t *testing.T) {
	path, g := oneScene(t, nil)
	fifo := filepath.Join(filepath.Dir(path), "s_red.tif")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cat, errs := LoadCatalog(context.Background(), path, CatalogOptions{})
	if cat == nil {
		t.Fatal(errs)
	}
	_, st, err := sampleWithin(t, context.Background(), 10*time.Second, cat, g, Options{SceneTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if st.Skipped[SkipBadHref] != 1 || !strings.Contains(st.Problems[0].Detail, "not a regular file") {
		t.Errorf("stats %+v, want one bad-href: not a regular file", st)
	}
}

// silentScene is a catalog whose red asset lies on a server that accepts
// connections and never answers.
func silentScene(t *testing.T) (*Catalog, grid.Grid) {
	t.Helper()
	addr := testkit.SilentServer(t)
	path, g := oneScene(t, map[string]string{"red": "https://" + addr + "/s_red.tif"})
	cat, errs := LoadCatalog(context.Background(), path, CatalogOptions{AllowHrefPrefixes: []string{filepath.Dir(path), "https://" + addr + "/"}})
	if cat == nil {
		t.Fatal(errs)
	}
	return cat, g
}

// TestSilentServer (defect 1): an asset on a server that accepts and never
// answers. GDAL's own deadline (GDAL_HTTP_TIMEOUT, set by storage), the
// scene deadline and a cancelled context each end the read within
// seconds; a timed-out scene is a transient failure, never a hang.
func TestSilentServer(t *testing.T) {
	t.Run("gdal timeout", func(t *testing.T) {
		cat, g := silentScene(t)
		o := Options{SceneAttempts: 1, GDALConfig: []string{"GDAL_HTTP_CONNECTTIMEOUT=1", "GDAL_HTTP_TIMEOUT=1", "GDAL_HTTP_MAX_RETRY=0"}}
		_, st, err := sampleWithin(t, context.Background(), 20*time.Second, cat, g, o)
		if err != nil {
			t.Fatal(err)
		}
		if st.Skipped[SkipTransient] != 1 || len(st.Incomplete[g.Field.ID]) != 1 {
			t.Fatalf("stats %+v, want the scene transient and its talhão incomplete", st)
		}
		if n, _ := TransientReads(context.Background(), st.Problems); n != 1 {
			t.Errorf("TransientReads = %d, want the timeout counted as transient (%v)", n, st.Problems)
		}
	})
	t.Run("scene deadline", func(t *testing.T) {
		cat, g := silentScene(t)
		o := Options{SceneAttempts: 1, SceneTimeout: time.Second, GDALConfig: []string{"GDAL_HTTP_TIMEOUT=8", "GDAL_HTTP_MAX_RETRY=0"}}
		t0 := time.Now()
		_, st, err := sampleWithin(t, context.Background(), 6*time.Second, cat, g, o)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d > 4*time.Second {
			t.Errorf("Sample took %s with a 1 s scene deadline", d)
		}
		if st.Skipped[SkipTransient] != 1 || !strings.Contains(st.Problems[0].Detail, "deadline") || len(st.Incomplete[g.Field.ID]) != 1 {
			t.Fatalf("stats %+v, want the scene transient at its deadline and its talhão incomplete", st)
		}
		if n, _ := TransientReads(context.Background(), st.Problems); n != 1 {
			t.Errorf("TransientReads = %d, want the deadline counted as transient", n)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		cat, g := silentScene(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		o := Options{GDALConfig: []string{"GDAL_HTTP_TIMEOUT=8", "GDAL_HTTP_MAX_RETRY=0"}}
		t0 := time.Now()
		_, _, err := sampleWithin(t, ctx, 6*time.Second, cat, g, o)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Sample after cancel: %v, want context.Canceled", err)
		}
		if d := time.Since(t0); d > 3*time.Second {
			t.Errorf("Sample returned %s after start, cancelled at 0.5 s", d)
		}
	})
}

// TestTalhaoOverBudget (defect 6): a talhão whose cells × scenes exceed
// the cap is refused before any read, with the reason; the others are read.
func TestTalhaoOverBudget(t *testing.T) {
	path, small := oneScene(t, nil)
	big := small
	big.Field.ID = "big"
	big.Cells = nil
	for i := range 500 {
		c := small.Cells[0]
		c.FieldID, c.ID = "big", fmt.Sprintf("c%03d", i)
		big.Cells = append(big.Cells, c)
	}
	cat, errs := LoadCatalog(context.Background(), path, CatalogOptions{})
	if cat == nil {
		t.Fatal(errs)
	}
	obs, st, err := Sample(context.Background(), cat, []grid.Grid{big, small}, Options{MaxCellScenes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Refused["big"]; !strings.Contains(r, "500 cells × 1 scenes") || !strings.Contains(r, "memory budget") {
		t.Errorf("Refused = %v, want big refused for its 500 cell-scene pairs", st.Refused)
	}
	if _, ok := st.Refused[small.Field.ID]; ok {
		t.Errorf("small talhão refused: %v", st.Refused)
	}
	for _, o := range obs {
		if o.FieldID == "big" {
			t.Fatalf("big talhão was read: %+v", o)
		}
	}
	if len(obs) != len(small.Cells) || st.ScenesRead != 1 {
		t.Errorf("%d observations, %d scenes read; want the small talhão's %d and 1", len(obs), st.ScenesRead, len(small.Cells))
	}
}
