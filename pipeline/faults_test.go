package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"hash/fnv"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/storage/s3test"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// manejoBinary builds cmd/manejo once per test process (version "test", as
// baseConfig) and returns its path. It fails when the source is newer than
// the test binary, before or after the build (checkSourceNotNewer): the
// binary would not run the code the in-process reference runs.
func manejoBinary(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		if binErr = checkSourceNotNewer(); binErr != nil {
			return
		}
		binDir, binErr = sharedTempDir("worker-bin-")
		if binErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-ldflags", "-X main.version=test", "-o", filepath.Join(binDir, "manejo"), "github.com/manejo/manejo/cmd/manejo")
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = err
			tb.Logf("go build: %s", out)
			return
		}
		binErr = checkSourceNotNewer()
	})
	if binErr != nil {
		tb.Fatalf("build manejo: %v", binErr)
	}
	return filepath.Join(binDir, "manejo")
}

// runArgs are the `manejo run` arguments equal to baseConfig.
func runArgs(dir, out string, extra ...string) []string {
	return append([]string{"run",
		"--fields", filepath.Join(dir, "talhoes.geojson"),
		"--catalog", filepath.Join(dir, "catalog.json"),
		"--dem", filepath.Join(dir, "dem.tif"),
		"--sowing", filepath.Join(dir, "sowing.csv"),
		"--season", "2026/2027", "--as-of", "2026-08-01",
		"--satellite-codes", "sentinel-2-l2a=S01,dem=S09",
		"--workers", "2", "--batch-size", "3",
		"--out", out}, extra...)
}

// sameTree fails the test unless got holds exactly the data files of want,
// byte for byte.
func sameTree(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d files, want %d", what, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s differs from the uninterrupted, fault-free run", what, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: extra file %s", what, k)
		}
	}
}

// TestKilledProcess kills `manejo run` with SIGKILL after its first batch
// (no deferred code, no cleanup: a lost node), runs it again, and expects
// exactly the files of an uninterrupted run: no talhão lost or doubled, no
// temporary file left — in the output, nor in $TMPDIR, where the killed
// run's read pass left its spill folder (both runs force the pass; the
// rerun removes the dead run's folder, storage.Scratch).
func TestKilledProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the manejo binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL is POSIX")
	}
	t.Parallel()
	dir := archive(t)
	ref, _ := reference(t)
	bin := manejoBinary(t)
	out, tmp := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "TMPDIR="+tmp)

	cmd := exec.Command(bin, runArgs(dir, out, "--read-pass", "on")...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	killed := false
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			t.Errorf("stderr line is not JSON: %q", sc.Text())
			continue
		}
		if batchCommitted(rec) && !killed {
			for _, k := range []string{"level", "shard", "batch", "done", "total", "rate", "eta"} {
				if _, ok := rec[k]; !ok {
					t.Errorf("progress record lacks %q: %s", k, sc.Text())
				}
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("the run ended (%v) before a progress line; stderr:\n%s", err, strings.Join(lines, "\n"))
	}
	if _, err := os.Stat(filepath.Join(out, "run.json")); err == nil {
		t.Fatal("the killed run wrote its manifest: it was killed too late to test anything")
	}
	if left := spillFolders(t, tmp); len(left) != 1 {
		t.Fatalf("the killed run left %d spill folders in $TMPDIR (%v), want its one", len(left), left)
	}

	rerun := exec.Command(bin, runArgs(dir, out, "--read-pass", "on")...)
	rerun.Env = env
	logs, err := rerun.CombinedOutput()
	if code := rerun.ProcessState.ExitCode(); code != 3 { // BAD-BOWTIE fails: exit 3
		t.Fatalf("rerun exit code %d (%v), want 3; output:\n%s", code, err, logs)
	}
	if !strings.Contains(string(logs), `"resumed":true`) {
		t.Errorf("rerun resumed no batch; output:\n%s", logs)
	}
	sameTree(t, "killed and rerun", testkit.HashTree(t, ref, "run.json", "run/"), testkit.HashTree(t, out, "run.json", "run/"))
	m, err := readManifest(context.Background(), filepath.Join(out, "run.json"))
	if err != nil || !m.Complete || m.Status.Total != 7 || m.Status.Failed != 1 {
		t.Fatalf("manifest after rerun = %+v, %v; want complete, 7 talhões, 1 failed", m, err)
	}
	if left := spillFolders(t, tmp); len(left) != 0 {
		t.Errorf("spill folders left in $TMPDIR after the rerun: %v", left)
	}
}

// spillFolders lists the read pass's spill folders under tmp.
func spillFolders(t *testing.T, tmp string) []string {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(tmp, "manejo-read-pass-*"))
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// TestCorruptCOG truncates one band of one scene: that scene is skipped and
// reported in run.json (skipped_scenes, with the file in the warnings), and
// every talhão still ends as without the fault (none fails but BAD-BOWTIE).
func TestCorruptCOG(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	t.Parallel()
	src := archive(t)
	dir := t.TempDir()
	const scene, band = "S2A_21LXG_20250725_0_L2A", "B04.tif"
	// A copy of the archive made of symlinks, but for the damaged file.
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if rel == filepath.Join("sentinel-2-l2a", scene, band) {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b[:len(b)/3], 0o644)
		}
		return os.Symlink(p, dst)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sentinel-2-l2a", scene, band)); err != nil {
		t.Fatalf("scene %s is not in the synthetic archive: %v", scene, err)
	}
	out := t.TempDir()
	sum, err := Run(context.Background(), baseConfig(t, dir, out))
	if err != nil {
		t.Fatalf("a corrupt COG aborted the run: %v", err)
	}
	if sum.Total != 7 || sum.Failed != 1 || sum.OK+sum.Partial != 6 {
		t.Fatalf("summary = %+v, want 7 talhões with only BAD-BOWTIE failed", sum)
	}
	m, err := readManifest(context.Background(), filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	skipped := int64(0)
	for _, n := range m.Skipped {
		skipped += n
	}
	ref, _ := reference(t)
	mr, err := readManifest(context.Background(), filepath.Join(ref, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	refSkipped := int64(0)
	for _, n := range mr.Skipped {
		refSkipped += n
	}
	if skipped <= refSkipped {
		t.Fatalf("skipped_scenes = %v (reference %v): the corrupt scene is not counted", m.Skipped, mr.Skipped)
	}
	named := false
	for _, w := range m.Warnings {
		if strings.Contains(w, scene) {
			named = true
			t.Logf("reported: %s", w)
		}
	}
	if !named {
		t.Errorf("no warning names the corrupt scene %s; warnings: %v", scene, m.Warnings)
	}
	t.Logf("skipped_scenes = %v, reference %v", m.Skipped, mr.Skipped)
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	refInds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(ref))
	if err != nil {
		t.Fatal(err)
	}
	if len(inds) != len(refInds) {
		t.Fatalf("%d indicator rows, want %d", len(inds), len(refInds))
	}
	for i := range inds {
		if inds[i].FieldID != refInds[i].FieldID || inds[i].Status != refInds[i].Status {
			t.Errorf("talhão %s: status %s with a corrupt scene, %s without (%v)", inds[i].FieldID, inds[i].Status, refInds[i].Status, inds[i].Reasons)
		}
	}
}

// TestFlakyS3 runs from and to an S3 server that fails requests, GDAL's
// reads of Sentinel-2 COGs and the AWS SDK's requests (talhões, catalog,
// sowing dates, staging, outputs, manifests) alike, each answered 503
// SlowDown or with its connection reset, as flakyFault scripts them: the
// outputs equal those of a clean run byte for byte, no scene is lost to a
// transient fault, and run.json counts the retries.
//
// The faults of a request depend only on its object and its number among
// that object's requests, not on how the run's concurrent reads interleave
// (a single counter over all requests, as before, gave one scene a fault
// in each of its five attempts in one of session 9's four CI runs). Two
// objects meet two faults in a row, so a request's retry meets a fault
// too (flakyTwice): GDAL's retry of a 503, and the SDK's of a reset.
func TestFlakyS3(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	dir := archive(t)
	ref, _ := reference(t)
	ctx := context.Background()
	var injected flakyCounts
	faults := s3test.Faults{
		Match: func(r *http.Request) bool { return isSDK(r) || strings.Contains(r.URL.Path, "/sentinel-2-l2a/") },
		Key: func(r *http.Request) string {
			if isSDK(r) {
				return "sdk " + r.Method + " " + r.URL.Path
			}
			return "cog " + r.URL.Path
		},
		Script: func(key string, n int) s3test.Fault { return injected.count(key, flakyFault(key, n)) },
	}
	fl := serveArchive(t, faults, "flaky", dir)
	t.Setenv("GDAL_HTTP_RETRY_DELAY", "0.05") // GDAL waits 0.5 s by default
	cfg := baseConfig(t, "", "s3://flaky/out")
	remoteInputs(&cfg, "s3://flaky/archive")
	start := time.Now()
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("run through a flaky S3: %v", err)
	}
	t.Logf("%d requests in %s: %d answered 503, %d dropped (%+v); %+v", fl.Requests(), time.Since(start).Round(time.Millisecond), fl.Failed503(), fl.Dropped(), injected.snapshot(), sum)
	got := injected.snapshot()
	for k, n := range got {
		if n == 0 {
			t.Fatalf("no %s injected (%+v): the test proves nothing of it", k, got)
		}
	}
	for k, want := range flakyTwice {
		if n := injected.byKey(k); n != int64(len(want)) {
			t.Errorf("%s met %d faults; the script gives its first %d requests %v: a retry meeting a fault is not exercised", k, n, len(want), want)
		}
	}
	if fl.Failed503() != got["cog 503"]+got["sdk 503"] || fl.Dropped() != got["cog reset"]+got["sdk reset"] {
		t.Errorf("the server injected %d × 503, %d resets; the script asked for %+v", fl.Failed503(), fl.Dropped(), got)
	}
	fl.Off.Store(true)
	local, err := s3test.Download(ctx, "s3://flaky/out", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, "through a flaky S3", testkit.HashTree(t, ref, "run.json", "run/"), testkit.HashTree(t, local, "run.json", "run/"))
	m, err := readManifest(ctx, filepath.Join(local, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := m.Skipped["unreadable"]; n > 0 {
		t.Errorf("%d scenes skipped as unreadable through transient faults: %v", n, m.Warnings)
	}
	if m.Status.Incomplete != 0 {
		t.Errorf("%d talhões incomplete through transient faults", m.Status.Incomplete)
	}
	io := m.IO["sentinel-2-l2a"]
	retries := int64(0)
	for _, n := range io.Retries {
		retries += n
	}
	if retries == 0 || io.Requests == 0 || io.Bytes == 0 {
		t.Errorf("run.json io = %+v: want the retries of the %d faulty COG reads, requests and bytes counted", io, got["cog 503"]+got["cog reset"])
	}
	// GDAL retried each 503 itself, in a scene's failed attempt or not.
	if n := io.Retries["gdal:http-503"]; n != got["cog 503"] {
		t.Errorf("run.json counts %d 503s GDAL retried; %d COG reads were answered 503", n, got["cog 503"])
	}
	// flakyFault's bound: a scene fails an attempt only on a reset GDAL
	// saw, once per reset (before storage.ForgetFile an open's reset also
	// failed the next attempt, "not recognized as a supported file format").
	for cause, n := range io.Retries {
		if strings.HasPrefix(cause, "scene:") && (cause != "scene:connection-reset" || n > got["cog reset"]) {
			t.Errorf("run.json: %d scenes read again for %q; want only resets, at most the %d injected", n, cause, got["cog reset"])
		}
	}
	t.Logf("io: %+v", io)
}

// flakyFault is TestFlakyS3's fault for the n-th request (from 1) of key:
// "cog " and a Sentinel-2 COG's path, or "sdk ", an HTTP method and an
// object's path. Each key meets at most one fault in the whole run (two
// for the keys of flakyTwice, on their first two requests), so what a
// scene or an SDK call meets is bounded whatever the scheduling:
//
//   - COGs of the scenes of 2022 (19 scenes): B04's first request (its
//     open) and B11's second (its first window, else a reopen) are
//     answered 503, and one request a scene is reset: B08's first (its
//     open) in S2A scenes, B12's second in S2B scenes. A 503 fails no
//     attempt: GDAL retries it itself (GDAL_HTTP_MAX_RETRY =
//     storage.MaxAttempts−1 = 7) and the retry is the object's next,
//     clean request. A reset GDAL 3.6 does not retry (curl resends a
//     request whose reused connection died: a window's reset often goes
//     unseen); one it sees fails the attempt, and Sample reads the scene
//     again once GDAL forgot the file (storage.ForgetFile: before it, an
//     open's reset failed the next attempt too). So a scene fails at most
//     1 attempt of the series.DefaultSceneAttempts = 5 the run gives it
//     and waits at most 1 s (SceneRetryDelay), far within the run's
//     series.DefaultRetryBudget of 3 minutes; the store is otherwise
//     clean, so its second attempt reads it.
//   - SDK requests: the first request of a fixed quarter of the keys (by an
//     FNV-1a hash of the key) is answered 503 or reset; the SDK tries each
//     request storage.MaxAttempts = 8 times.
//   - Two keys meet two faults instead, on their first two requests
//     (flakyTwice): one scene's B04, whose open GDAL retries after a 503
//     into a second 503 (7 retries allowed), and the catalog, whose SDK
//     GET is reset and then answered 503 (or, when Go's transport
//     resent the reset request on a new connection, that resend is): a
//     retry meets a fault, and the third request is clean. The scene
//     still fails at most the one attempt of its B08 reset.
func flakyFault(key string, n int) s3test.Fault {
	if f, ok := flakyTwice[key]; ok && n <= len(f) {
		return f[n-1]
	}
	if p, ok := strings.CutPrefix(key, "cog "); ok {
		f := strings.Split(path.Base(path.Dir(p)), "_") // S2B 21LXG 20221218 0 L2A
		if len(f) < 3 || !strings.HasPrefix(f[2], "2022") {
			return s3test.Pass
		}
		reset := "B12.tif#2"
		if f[0] == "S2A" {
			reset = "B08.tif#1"
		}
		switch k := path.Base(p) + "#" + strconv.Itoa(n); k {
		case "B04.tif#1", "B11.tif#2":
			return s3test.SlowDown
		case reset:
			return s3test.Reset
		}
		return s3test.Pass
	}
	if n != 1 {
		return s3test.Pass
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	switch h.Sum32() % 8 {
	case 0:
		return s3test.SlowDown
	case 1:
		return s3test.Reset
	}
	return s3test.Pass
}

// flakyTwice are the keys flakyFault gives two faults, on their first two
// requests.
var flakyTwice = map[string][]s3test.Fault{
	"cog /flaky/archive/sentinel-2-l2a/S2A_21LXG_20220919_0_L2A/B04.tif": {s3test.SlowDown, s3test.SlowDown},
	"sdk GET /flaky/archive/catalog.json":                                {s3test.Reset, s3test.SlowDown},
}

// isSDK says whether the AWS SDK sent r (GDAL sends the others).
func isSDK(r *http.Request) bool { return strings.Contains(r.UserAgent(), "aws-sdk-go") }

// flakyCounts counts the faults a script injected, by source and kind.
type flakyCounts struct {
	mu  sync.Mutex
	n   map[string]int64
	key map[string]int64 // faults by key
}

// count records f for key and returns it.
func (c *flakyCounts) count(key string, f s3test.Fault) s3test.Fault {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int64{"cog 503": 0, "cog reset": 0, "sdk 503": 0, "sdk reset": 0}
	}
	src, _, _ := strings.Cut(key, " ")
	if f != s3test.Pass {
		if c.key == nil {
			c.key = map[string]int64{}
		}
		c.key[key]++
	}
	switch f {
	case s3test.SlowDown:
		c.n[src+" 503"]++
	case s3test.Reset:
		c.n[src+" reset"]++
	}
	return f
}

// byKey returns the faults injected into key's requests.
func (c *flakyCounts) byKey(key string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.key[key]
}

// snapshot returns the counts: "cog 503", "cog reset", "sdk 503", "sdk reset".
func (c *flakyCounts) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int64{"cog 503": 0, "cog reset": 0, "sdk 503": 0, "sdk reset": 0}
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

var _ = io.Discard
