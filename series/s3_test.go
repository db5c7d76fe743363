package series

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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
// and two batches (three Samples sharing its RetryBudget) send the server
// what one Sample of 3 attempts sends (within one GET per attempt, which
// GDAL's timing varies), all of it in the read pass, and
// manejo asks the store 3 times in all whether the object is there (one
// HEAD per failed attempt); the batches send nothing. Before, each batch
// made its 3 attempts again (3 times the requests). GDAL's and the SDK's
// retries inside an attempt are off to keep the test fast.
func TestSceneAttemptsSeenByServer(t *testing.T) {
	var heads atomic.Int64
	_, fl := s3test.StartFlakyS3(t, s3test.Faults{Every503: 1, Match: func(r *http.Request) bool {
		down := strings.HasSuffix(r.URL.Path, "/down_red.tif")
		if down && r.Method == http.MethodHead {
			heads.Add(1)
		}
		return down
	}}, "archive")
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	storage.ResetClient()
	ctx := context.Background()
	fl.Off.Store(true)
	cat, pts := s3Scene(t, "down")
	fl.Off.Store(false)
	cfg := []string{"GDAL_HTTP_MAX_RETRY=0"}
	for k, v := range storage.GDALConfig() {
		if k != "GDAL_HTTP_MAX_RETRY" {
			cfg = append(cfg, k+"="+v)
		}
	}
	g := fieldAround("f", 0.0002, pts...)
	// sample runs one Sample of 3 attempts and returns the requests the
	// server answered 503 and manejo's HEADs among them.
	sample := func(what string, b *RetryBudget) (requests, asked int64) {
		t.Helper()
		n0, h0 := fl.Failed503(), heads.Load()
		_, st, err := sampleWithin(t, ctx, 60*time.Second, cat, g, Options{SceneAttempts: 3, SceneRetryDelay: time.Millisecond, Budget: b, GDALConfig: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Incomplete[g.Field.ID]) != 1 || st.Skipped[SkipTransient] != 1 || !strings.Contains(st.Problems[0].Detail, "still failing after 3 attempts") {
			t.Fatalf("%s: incomplete %v, skipped %v, problems %v; want the scene transient after 3 attempts, the talhão incomplete", what, st.Incomplete, st.Skipped, st.Problems)
		}
		return fl.Failed503() - n0, heads.Load() - h0
	}
	one, oneAsked := sample("one Sample", NewRetryBudget(time.Hour))
	if one == 0 || oneAsked != 3 {
		t.Fatalf("one Sample of 3 attempts: %d requests, %d HEADs; want some, and 3", one, oneAsked)
	}
	run := NewRetryBudget(time.Hour)
	pass, passAsked := sample("read pass", run)
	total, asked := pass, passAsked
	for batch := 1; batch <= 2; batch++ {
		n, h := sample(fmt.Sprintf("batch %d", batch), run)
		if n != 0 {
			t.Errorf("batch %d: %d more requests, want none: the scene spent its 3 attempts in the read pass", batch, n)
		}
		total, asked = total+n, asked+h
	}
	// The attempts are counted exactly by manejo's HEADs; the GETs within
	// one failed attempt vary by one with GDAL's timing (7 or 8 for 3
	// attempts, seen under load), so the run's total is held to one
	// Sample's within one request per attempt — well below the 3 Samples'
	// worth the old per-Sample count sent.
	if asked != 3 || total < one-3 || total > one+3 {
		t.Errorf("the run (read pass and 2 batches): %d requests, %d HEADs; want one Sample's %d (± 1 per attempt), and 3", total, asked, one)
	}
	t.Logf("one Sample of 3 attempts: %d requests (%d HEADs); the run: read pass %d, batches 0", one, oneAsked, pass)
}
