package series

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
	"github.com/paulmach/orb"
)

// TestS3Archive reads the catalog through the storage package's opener and
// the COGs through GDAL's /vsis3/, from an in-process S3 server, with
// relative hrefs resolved against the s3:// catalog URL.
func TestS3Archive(t *testing.T) {
	s3test.StartS3(t, "archive")
	ctx := context.Background()
	cat, pts := s3Scene(t, "s3scene")
	if h := cat.Items[0].Assets["red"].Href; h != "s3://archive/s2/s3scene_red.tif" {
		t.Fatalf("red href %s, want s3://archive/s2/s3scene_red.tif", h)
	}
	var cfg []string
	for k, v := range storage.GDALConfig() {
		cfg = append(cfg, k+"="+v)
	}
	obs, st, err := Sample(ctx, cat, []grid.Grid{fieldAround("f", 0.0002, pts...)}, Options{GDALConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 || st.ScenesRead != 1 {
		t.Fatalf("obs %+v stats %+v", obs, st)
	}
	for _, o := range obs {
		if o.Mask != "" || !near(float64(o.NDVI), 0.5) || !near(float64(o.NDTI), 0.25) {
			t.Errorf("obs %+v, want NDVI 0.5, NDTI 0.25", o)
		}
	}
}

// s3Scene writes one test scene named id and its catalog to
// s3://archive/s2/ on the running S3 server and loads the catalog; it
// returns the catalog and the scene's cell centres.
func s3Scene(t *testing.T, id string) (*Catalog, []orb.Point) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	it, pts := s2Spec(4, 1200).build(t, dir, id, "2024-01-01T13:00:00Z")
	writeJSON(t, filepath.Join(dir, "catalog.json"), collection(it))
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := storage.WriteFile(ctx, "s3://archive/s2/"+e.Name(), data); err != nil {
			t.Fatal(err)
		}
	}
	cat, errs := LoadCatalog(ctx, "s3://archive/s2/catalog.json", CatalogOptions{Open: storage.Open, AllowHrefPrefixes: []string{"s3://archive/"}})
	if len(errs) > 0 || cat == nil {
		t.Fatalf("LoadCatalog: %v", errs)
	}
	return cat, pts
}

// TestSceneAttemptsSeenByServer (issue 26): an asset on a loopback S3
// server answering 503 for ever is attempted SceneAttempts times in a run,
// not SceneAttempts times in each Sample that needs it. A run's read pass
// and two batches (three Samples sharing its RetryBudget, each batch
// starting after the backoff) send the server what one Sample of 3
// attempts sends (within one GET per attempt, which GDAL's timing varies)
// in the read pass, then one probe attempt per batch (review #3: a fault
// that cleared would be read; TestSceneProbeAfterBlip): 5 attempts in
// all, counted by manejo (IOStats.Scenes). manejo asks the store whether
// the object is there (a HEAD) once for each failed attempt whose message
// does not say transient by itself, and for no other (asksDue: GDAL
// reports the 503 SlowDown in words that say so, or sometimes as the file
// missing; review s8 #5: the bound was "at most", which no HEAD at all
// passed). Before
// issue 26 each batch made its 3 attempts again (9 in all); before the
// probe, the batches sent nothing. GDAL's and the SDK's retries inside an
// attempt are off to keep the test fast.
func TestSceneAttemptsSeenByServer(t *testing.T) {
	var heads atomic.Int64
	_, fl := s3test.StartFlakyS3(t, s3test.Faults{Every503: 1, Match: func(r *http.Request) bool {
		down := strings.HasSuffix(r.URL.Path, "/down_red.tif")
		if down && r.Method == http.MethodHead {
			heads.Add(1)
		}
		return down
	}}, "archive")
	cat, g, cfg := downScene(t, fl)
	ctx := context.Background()
	// sample runs one Sample and returns the requests the server answered
	// 503, manejo's HEADs among them and the attempts manejo made.
	sample := func(what string, b *RetryBudget, wantFailed int) (requests, asked int64, attempts int) {
		return sampleAsked(t, what, fl, &heads, wantFailed, func() (Stats, error) {
			_, st, err := sampleWithin(t, ctx, 60*time.Second, cat, g, Options{SceneAttempts: 3, SceneRetryDelay: time.Millisecond, Budget: b, GDALConfig: cfg})
			return st, err
		})
	}
	one, oneAsked, oneAttempts := sample("one Sample", NewRetryBudget(time.Hour), 3)
	if one == 0 || oneAttempts != 3 {
		t.Fatalf("one Sample of 3 attempts: %d requests (%d HEADs), %d attempts; want some, and 3", one, oneAsked, oneAttempts)
	}
	run := NewRetryBudget(time.Hour)
	pass, passAsked, passAttempts := sample("read pass", run, 3)
	if passAttempts != 3 {
		t.Errorf("read pass: %d attempts (%d HEADs); want 3", passAttempts, passAsked)
	}
	total := pass
	for batch := 1; batch <= 2; batch++ {
		time.Sleep(20 * time.Millisecond) // past the backoff (1 ms·2²)
		n, h, a := sample(fmt.Sprintf("batch %d", batch), run, 3+batch)
		if gets := n - h; a != 1 || gets < 1 || gets > 2 {
			t.Errorf("batch %d: %d attempts, %d HEADs, %d requests; want one probe attempt (1 or 2 GETs)", batch, a, h, n)
		}
		total += n
	}
	// The GETs within one failed attempt vary by one with GDAL's timing
	// (4 or 5 for 3 attempts, seen under load; manejo's HEADs apart), so
	// the read pass's GETs are held to one Sample's within one per attempt.
	if g1, gp := one-oneAsked, pass-passAsked; gp < g1-3 || gp > g1+3 {
		t.Errorf("the read pass: %d GETs; want one Sample's %d (± 1 per attempt)", gp, g1)
	}
	t.Logf("one Sample of 3 attempts: %d requests (%d HEADs); the run: read pass %d, batches %d", one, oneAsked, pass, total-pass)
}

// sampleAsked runs one Sample of TestSceneAttemptsSeenByServer (sample)
// over fl, whose every answer for the down asset is a 503 SlowDown, wants
// the scene given up as transient after wantFailed attempts in the run,
// and returns the requests answered 503, manejo's HEADs among them
// (heads) and the attempts manejo made; the HEADs must be asksDue.
func sampleAsked(t *testing.T, what string, fl *s3test.Flaky, heads *atomic.Int64, wantFailed int, sample func() (Stats, error)) (requests, asked int64, attempts int) {
	t.Helper()
	n0, h0 := fl.Failed503(), heads.Load()
	st, err := sample()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Incomplete) != 1 || st.Skipped[SkipTransient] != 1 || !strings.Contains(st.Problems[0].Detail, fmt.Sprintf("still failing after %d attempts", wantFailed)) {
		t.Fatalf("%s: incomplete %v, skipped %v, problems %v; want the scene transient after %d attempts, the talhão incomplete", what, st.Incomplete, st.Skipped, st.Problems, wantFailed)
	}
	for _, io := range st.IO {
		attempts += io.Scenes
	}
	requests, asked = fl.Failed503()-n0, heads.Load()-h0
	if due := asksDue(st); asked != due {
		retries := map[string]map[string]int64{}
		for c, io := range st.IO {
			retries[c] = io.Retries
		}
		t.Errorf("%s: manejo sent %d HEADs; want %d, one per failed attempt whose message does not say transient (retries by cause %v, last %q)", what, asked, due, retries, st.Problems[0].Detail)
	}
	return requests, asked, attempts
}

// asksDue is how many times manejo must ask the store whether the object
// is there in a Sample whose every attempt failed on a 503 SlowDown: once
// per failed attempt whose message does not say transient by its words
// (transientText). GDAL reports such an answer in words that say so — its
// status or S3's message, retry cause http-503 — or as the file missing
// (open-failed): the attempts read again are in IOStats.Retries by cause,
// the last attempt's message is its problem's detail.
func asksDue(st Stats) int64 {
	var n int64
	for _, io := range st.IO {
		for cause, k := range io.Retries {
			if strings.HasPrefix(cause, "scene:") && cause != "scene:http-503" {
				n += k
			}
		}
	}
	for _, p := range st.Problems {
		if p.Reason == SkipTransient && !transientText(p.Detail) {
			n++
		}
	}
	return n
}

// downScene uploads the "down" scene while fl lets everything through, and
// returns its catalog, a talhão over it and the GDAL options of a read
// without GDAL's or the SDK's own retries (one request per attempt).
func downScene(t *testing.T, fl *s3test.Flaky) (*Catalog, grid.Grid, []string) {
	t.Helper()
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	storage.ResetClient()
	fl.Off.Store(true)
	cat, pts := s3Scene(t, "down")
	fl.Off.Store(false)
	cfg := []string{"GDAL_HTTP_MAX_RETRY=0"}
	for k, v := range storage.GDALConfig() {
		if k != "GDAL_HTTP_MAX_RETRY" {
			cfg = append(cfg, k+"="+v)
		}
	}
	return cat, fieldAround("f", 0.0002, pts...), cfg
}

// TestSceneProbeAfterBlip (review #3): a fault that clears between
// Samples. An asset on a loopback S3 server answers 503 while the run's
// read pass spends the scene's 3 attempts on it (a blip), then answers
// again; the next Sample sharing the run's budget, after the backoff,
// reads the scene — the observations of a clean read, the talhão complete
// — with one attempt. Before, the scene was given up unread by every later
// Sample of the run (its attempts spent), and its talhões stayed
// incomplete whatever the budget left.
func TestSceneProbeAfterBlip(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	_, fl := s3test.StartFlakyS3(t, s3test.Faults{Every503: 1, Match: func(r *http.Request) bool {
		return down.Load() && strings.HasSuffix(r.URL.Path, "/down_red.tif")
	}}, "archive")
	cat, g, cfg := downScene(t, fl)
	ctx := context.Background()
	o := Options{SceneAttempts: 3, SceneRetryDelay: time.Millisecond, GDALConfig: cfg}
	o.Budget = NewRetryBudget(time.Hour)
	_, st, err := sampleWithin(t, ctx, 60*time.Second, cat, g, o)
	if err != nil || len(st.Incomplete[g.Field.ID]) != 1 {
		t.Fatalf("read pass during the blip: %v, incomplete %v; want the talhão incomplete", err, st.Incomplete)
	}
	down.Store(false)                 // the fault clears
	time.Sleep(20 * time.Millisecond) // past the backoff (1 ms·2²)
	obs, st, err := sampleWithin(t, ctx, 60*time.Second, cat, g, o)
	if err != nil {
		t.Fatal(err)
	}
	attempts := 0
	for _, io := range st.IO {
		attempts += io.Scenes
	}
	// A clean read of the scene, without the run's budget, for reference
	// (after the probe: GDAL caches what it read).
	clean, _, err := sampleWithin(t, ctx, 60*time.Second, cat, g, Options{GDALConfig: cfg})
	if err != nil || len(clean) == 0 {
		t.Fatalf("clean read: %v, %d observations", err, len(clean))
	}
	if len(st.Incomplete) != 0 || st.ScenesRead != 1 || attempts != 1 || !reflect.DeepEqual(obs, clean) {
		t.Errorf("next Sample after the fault cleared: incomplete %v, %d scenes read in %d attempts, problems %v, %d observations (clean %d); want the scene read at once, as clean",
			st.Incomplete, st.ScenesRead, attempts, st.Problems, len(obs), len(clean))
	}
}

// TestOpenResetCostsOneAttempt: an asset on a loopback S3 server whose
// first request, GDAL's open, has its connection reset, and no other: the
// scene is read at its second attempt, as in a clean read. Before
// storage.ForgetFile, GDAL kept the failed open's file properties until
// the second attempt's handle closed, so that attempt failed too ("not
// recognized as a supported file format"), and one dropped request cost
// two of a scene's attempts (TestFlakyS3: each open's reset it saw).
//
// The server keeps no connection alive: curl resends a request whose
// reused connection died, and GDAL would never see the reset (the test
// proved nothing in about a third of its runs: review s10 F15).
func TestOpenResetCostsOneAttempt(t *testing.T) {
	srv, fl := s3test.StartFlakyS3(t, s3test.Faults{
		Match: func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/reset_red.tif") },
		Key:   func(r *http.Request) string { return r.URL.Path },
		Script: func(_ string, n int) s3test.Fault {
			if n == 1 {
				return s3test.Reset
			}
			return s3test.Pass
		},
	}, "archive")
	srv.Config.SetKeepAlivesEnabled(false)
	fl.Off.Store(true)
	cat, pts := s3Scene(t, "reset")
	fl.Off.Store(false)
	g := fieldAround("f", 0.0002, pts...)
	var cfg []string
	for k, v := range storage.GDALConfig() {
		cfg = append(cfg, k+"="+v)
	}
	ctx := context.Background()
	obs, st, err := sampleWithin(t, ctx, 60*time.Second, cat, g, Options{SceneAttempts: 2, SceneRetryDelay: time.Millisecond, GDALConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	attempts := 0
	for _, io := range st.IO {
		attempts += io.Scenes
	}
	if fl.Dropped() != 1 {
		t.Fatalf("%d connections reset; want the open's", fl.Dropped())
	}
	clean, _, err := sampleWithin(t, ctx, 60*time.Second, cat, g, Options{GDALConfig: cfg})
	if err != nil || len(clean) == 0 {
		t.Fatalf("clean read: %v, %d observations", err, len(clean))
	}
	// Of 2 attempts, the regression spends both and leaves the talhão
	// incomplete; GDAL sees the reset, so the first attempt fails.
	if len(st.Incomplete) != 0 || st.ScenesRead != 1 || attempts != 2 || !reflect.DeepEqual(obs, clean) {
		t.Errorf("after one reset open: incomplete %v, %d scenes read in %d attempts, problems %v, %d observations (clean %d); want the scene read at its second attempt, as clean",
			st.Incomplete, st.ScenesRead, attempts, st.Problems, len(obs), len(clean))
	}
}
