package pipeline

import (
	"context"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/storage/s3test"
)

// retriesOf sums the retries of run.json's io section.
func retriesOf(m *runManifest) (n int64) {
	for _, io := range m.IO {
		for _, v := range io.Retries {
			n += v
		}
	}
	return n
}

// TestRandomFaults reads every input from an S3 server that fails 5 % of
// all requests at random (2.5 % answered 503 SlowDown, 2.5 % with the
// connection reset), SDK and GDAL alike: the outputs equal those of the
// local, fault-free reference byte for byte, no talhão is incomplete, and
// run.json counts the retries (IN 2/2025 item 6.5: all images). Each
// request's draw is fixed by the seed, its object and its number among
// the object's requests (Faults.Key), not by the order concurrent
// requests arrive in: the faults an object meets are the same in every
// run.
func TestRandomFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	ref, _ := reference(t)
	cfg, fl := remoteRun(t, s3test.Faults{Rate503: 0.025, RateDrop: 0.025, Seed: 15, Key: func(r *http.Request) string {
		return r.Method + " " + r.URL.Path
	}})
	cfg.Out = t.TempDir()
	cfg.SceneRetryDelay = 100 * time.Millisecond
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("run through 5 %% faults: %v", err)
	}
	t.Logf("%d requests: %d answered 503, %d reset; %+v", fl.Requests(), fl.Failed503(), fl.Dropped(), sum)
	if fl.Failed503() == 0 || fl.Dropped() == 0 {
		t.Fatalf("faults injected: %d × 503, %d reset; want both", fl.Failed503(), fl.Dropped())
	}
	sameOutputs(t, "through 5 % faults", ref, cfg.Out)
	m, err := readManifest(context.Background(), filepath.Join(cfg.Out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Incomplete != 0 || m.Status.Incomplete != 0 || m.Skipped["transient"] != 0 || m.Skipped["unreadable"] != 0 {
		t.Errorf("summary %+v, skipped %v: a transient fault cost a scene", sum, m.Skipped)
	}
	if retriesOf(m) == 0 {
		t.Errorf("run.json io %+v counts no retry", m.IO)
	}
	t.Logf("io: %+v", m.IO)
}

// TestThrottledStore reads the COGs from a store that answers 503
// SlowDown to any request beyond maxInFlight being served at once, while
// the worker starts with --io-concurrency 32 scenes of five COGs each:
// the job slows down (GDAL's retries, the scene retries, fewer scenes in
// flight) and still writes the fault-free outputs byte for byte, with
// nothing incomplete (issue 15: a throttled store slows the job down
// instead of failing it). A store taking fewer requests at once than one
// scene sends in parallel (6) still fails scenes: docs/performance.md.
func TestThrottledStore(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	const maxInFlight = 12
	ref, _ := reference(t)
	cfg, fl := remoteRun(t, s3test.Faults{MaxInFlight: maxInFlight, Latency: 10 * time.Millisecond, Match: func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ".tif")
	}})
	cfg.Out = t.TempDir()
	cfg.IOConcurrency = 32
	cfg.SceneRetryDelay = 100 * time.Millisecond
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("run against a store limited to %d requests at once: %v", maxInFlight, err)
	}
	m := manifestOf(t, cfg.Out)
	t.Logf("%d COG requests, %d answered 503 SlowDown; %+v; io %+v", fl.Requests(), fl.Failed503(), sum, m.IO)
	if fl.Failed503() == 0 {
		t.Fatal("the store never throttled: the test does not exercise the limit")
	}
	if sum.Incomplete != 0 || m.Skipped["transient"] != 0 {
		t.Errorf("summary %+v, skipped %v: throttling cost scenes", sum, m.Skipped)
	}
	if retriesOf(m) == 0 {
		t.Errorf("run.json io %+v counts no retry", m.IO)
	}
	sameOutputs(t, "against a throttling store", ref, cfg.Out)
}

// TestAssetDown fails every request for one band of one scene for the
// whole run: the talhões that scene covers end incomplete, naming it,
// with no indicator row and no SINM payload, and the run exits as not
// done. A re-run after the fault clears reads them again and gives the
// fault-free output byte for byte.
func TestAssetDown(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	t.Run("no cache", func(t *testing.T) { assetDown(t, false) })
	t.Run("cache", func(t *testing.T) { assetDown(t, true) })
}

// assetDown is TestAssetDown with or without an observation cache. With
// one, the scene that failed must not be remembered as read: the re-run
// reads it for exactly the talhões that lacked it, serves the rest from
// the cache, and writes the fault-free outputs; a third run reads nothing.
func assetDown(t *testing.T, cached bool) {
	const scene = "S2A_21LXG_20250725_0_L2A"
	ref, _ := reference(t)
	t.Setenv("AWS_MAX_ATTEMPTS", "2") // the SDK asks whether the object exists
	cfg, fl := remoteRun(t, s3test.Faults{Every503: 1, Match: func(r *http.Request) bool {
		return strings.Contains(r.URL.Path, "/"+scene+"/B04.tif")
	}})
	t.Setenv("GDAL_HTTP_MAX_RETRY", "1")
	cfg.Out = t.TempDir()
	if cached {
		cfg.Cache = t.TempDir()
	}
	cfg.SceneAttempts, cfg.SceneRetryDelay = 2, 50*time.Millisecond
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fl.Failed503() == 0 {
		t.Fatal("no request for the asset was failed")
	}
	m, err := readManifest(context.Background(), filepath.Join(cfg.Out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	inc := map[string]bool{}
	for _, f := range m.Failures {
		if f.Status == export.StatusIncomplete {
			inc[f.FieldID] = true
			if !strings.Contains(f.Reason, scene) {
				t.Errorf("incomplete %s does not name the scene: %s", f.FieldID, f.Reason)
			}
		}
	}
	if len(inc) == 0 || sum.Incomplete != len(inc) || m.Status.Incomplete != len(inc) || m.Skipped["transient"] == 0 {
		t.Fatalf("summary %+v, status %+v, skipped %v: want the scene's talhões incomplete", sum, m.Status, m.Skipped)
	}
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(cfg.Out))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range inds {
		if inc[r.FieldID] {
			t.Errorf("incomplete talhão %s has an indicator row (%s)", r.FieldID, r.Status)
		}
	}
	for id := range inc {
		if _, err := os.Stat(filepath.Join(cfg.Out, sinm.PayloadName(id))); err == nil {
			t.Errorf("incomplete talhão %s has a SINM payload", id)
		}
	}
	t.Logf("first run: %+v; incomplete %v", sum, inc)

	fl.Off.Store(true) // the fault clears
	sum, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Incomplete != 0 {
		t.Fatalf("re-run: %+v, want nothing incomplete", sum)
	}
	sameOutputs(t, "re-run after the fault cleared", ref, cfg.Out)
	if cached {
		cachedReruns(t, cfg, ref, len(inc))
	}
}

// cachedReruns checks the cache after TestAssetDown's re-run: that re-run
// read the failed scene for each talhão that lacked it (and the first run
// cached nothing of it), and one more run, into a new folder, reads no
// scene at all and still writes the fault-free outputs.
func cachedReruns(t *testing.T, cfg Config, ref string, incomplete int) {
	t.Helper()
	c := manifestOf(t, cfg.Out).Counts
	if c["cache_pairs_read"] != int64(incomplete) || c["cache_pairs_served"] == 0 {
		t.Errorf("re-run after the fault: cache counts %v; want only the failed scene read, once for each of the %d incomplete talhões, and the rest served", c, incomplete)
	}
	cfg.Out = t.TempDir() // a new folder: the same one would resume its done batches
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	c = manifestOf(t, cfg.Out).Counts
	if c["cache_pairs_read"] != 0 || c["scenes_read"] != 0 || c["cache_pairs_served"] == 0 {
		t.Errorf("third run: cache counts %v; want every (talhão, scene) pair served", c)
	}
	sameOutputs(t, "third run, all from the cache", ref, cfg.Out)
}

// TestIOAccounting checks run.json's io figures against the S3 server's
// own count: the GET requests GDAL sent for the Sentinel-2 COGs and the
// body bytes it received, with no fault (no retry), and one scene attempt
// per scene read.
func TestIOAccounting(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	cfg, fl := remoteRun(t, s3test.Faults{Match: func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/sentinel-2-l2a/") && strings.HasSuffix(r.URL.Path, ".tif")
	}})
	cfg.Out = t.TempDir()
	// One attempt per selected scene is the batches' own reading: the read
	// pass (one attempt per scene for all batches) is checked below.
	cfg.ReadPass = ReadPassOff
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(context.Background(), filepath.Join(cfg.Out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer ioAccountingReadPass(t, cfg, fl)
	io := m.IO["sentinel-2-l2a"]
	t.Logf("run.json io %+v; server: %d requests, %d body bytes", io, fl.Requests(), fl.BodyBytes())
	// Bytes are exact. GDAL 3.6's statistics record fewer GETs than it
	// sends (3,500 of 3,820 here, the bytes all accounted for): requests
	// must lie between 90 % of the server's count and the count.
	if io.Bytes != fl.BodyBytes() || io.Requests > fl.Requests() || float64(io.Requests) < 0.9*float64(fl.Requests()) {
		t.Errorf("run.json counts %d requests and %d bytes, the server answered %d GETs and sent %d", io.Requests, io.Bytes, fl.Requests(), fl.BodyBytes())
	}
	if len(io.Retries) != 0 || int64(io.Scenes) != m.Counts["scenes_selected"] || io.ReadSeconds <= 0 {
		t.Errorf("io %+v: want no retry, one attempt per selected scene (%d), time in GDAL", io, m.Counts["scenes_selected"])
	}
}

// ioAccountingReadPass is TestIOAccounting with the read pass (the default
// on S3): bytes exact against the server, requests within GDAL's
// undercount, one attempt per scene the run read (scenes_read: the pass's
// and the batches'), and a minimum at most the bytes received.
func ioAccountingReadPass(t *testing.T, cfg Config, fl *s3test.Flaky) {
	cfg.Out, cfg.ReadPass = t.TempDir(), ReadPassAuto
	n0, b0 := fl.Requests(), fl.BodyBytes()
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(context.Background(), filepath.Join(cfg.Out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	io := m.IO["sentinel-2-l2a"]
	reqs, body := fl.Requests()-n0, fl.BodyBytes()-b0
	t.Logf("read pass: run.json io %+v; server: %d requests, %d body bytes", io, reqs, body)
	if io.Bytes != body || io.Requests > reqs || float64(io.Requests) < 0.9*float64(reqs) {
		t.Errorf("read pass: run.json counts %d requests and %d bytes, the server answered %d GETs and sent %d", io.Requests, io.Bytes, reqs, body)
	}
	if len(io.Retries) != 0 || int64(io.Scenes) != m.Counts["scenes_read"] || m.Counts["read_pass_scenes"] == 0 ||
		io.MinBytes <= 0 || io.MinBytes > io.Bytes || io.BytesOverMin != math.Round(float64(io.Bytes)/float64(io.MinBytes)*1000)/1000 {
		t.Errorf("read pass: io %+v, counts %v: want no retry, one attempt per scene read, a minimum below the bytes", io, m.Counts)
	}
}
