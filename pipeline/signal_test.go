package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/storage/s3test"
)

// downScene is the scene one of whose assets answers 503 forever in the
// tests of the retry budget.
const downScene = "S2A_21LXG_20250725_0_L2A"

// assetDownStore serves the test archive from a loopback S3 server on
// which every request for one band of downScene is answered 503 SlowDown,
// with GDAL's and the SDK's retry settings left at manejo's defaults (no
// test shortcut: GDAL waits 0.5 s before its first retry).
func assetDownStore(t *testing.T) *s3test.Flaky {
	t.Helper()
	fl := serveArchive(t, s3test.Faults{Every503: 1, Match: func(r *http.Request) bool {
		return strings.Contains(r.URL.Path, "/"+downScene+"/B04.tif")
	}}, "down", archive(t))
	for _, k := range []string{"GDAL_HTTP_RETRY_DELAY", "GDAL_HTTP_MAX_RETRY", "AWS_MAX_ATTEMPTS"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return fl
}

// Exit codes of manejo run (cmd/manejo, README "Exit codes").
const (
	exitFailedTalhoes     = 3 // finished, some talhões failed
	exitIncompleteTalhoes = 4 // finished, some talhões incomplete: run again later
)

// remoteRunArgs are runArgs with every input on s3://down/archive.
func remoteRunArgs(out string, extra ...string) []string {
	p := "s3://down/archive"
	return append([]string{"run",
		"--fields", p + "/talhoes.geojson", "--catalog", p + "/catalog.json",
		"--dem", p + "/dem.tif", "--sowing", p + "/sowing.csv",
		"--season", "2026/2027", "--as-of", "2026-08-01",
		"--satellite-codes", "sentinel-2-l2a=S01,dem=S09",
		"--workers", "2", "--batch-size", "3", "--out", out}, extra...)
}

// timedRun runs bin with args to its end and returns its exit code, wall
// time and output.
func timedRun(t *testing.T, bin string, args ...string) (int, time.Duration, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	_ = cmd.Run()
	return cmd.ProcessState.ExitCode(), time.Since(t0), out.String()
}

// TestRetryBudgetEndsRun is issue 26 item 4: with one asset answering 503
// for the whole run and every retry setting at its default, `manejo run
// --retry-budget 10s` ends within the time of a fault-free run plus the
// budget (and a margin for the attempt in flight), exit 4 (finished, some
// talhões incomplete: the code an engine retries; before, 3 as for failed
// talhões, which engines do not retry), with the talhões of that scene
// incomplete, naming it, without rows or payloads; before the budget, the
// run did not end within 600 s. A re-run after the fault clears exits as
// the fault-free run (3: BAD-BOWTIE fails by design) and writes its outputs
// byte for byte.
func TestRetryBudgetEndsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the manejo binary")
	}
	ref, _ := reference(t)
	bin := manejoBinary(t)
	fl := assetDownStore(t)
	const budget = 10 * time.Second

	// The machine is shared: the fault-free run is timed before and after
	// the faulty one, and the slower of the two is the baseline.
	cleanRun := func() time.Duration {
		fl.Off.Store(true)
		defer fl.Off.Store(false)
		code, d, logs := timedRun(t, bin, remoteRunArgs(t.TempDir())...)
		if code != exitFailedTalhoes {
			t.Fatalf("fault-free run: exit %d, want %d (BAD-BOWTIE); output:\n%s", code, exitFailedTalhoes, logs)
		}
		return d
	}
	before := cleanRun()
	out := t.TempDir()
	code, took, logs := timedRun(t, bin, remoteRunArgs(out, "--retry-budget", budget.String())...)
	clean := max(before, cleanRun())
	t.Logf("fault-free run %s (slower of two); with the asset down and --retry-budget %s: %s (%d requests answered 503)", clean.Round(time.Millisecond), budget, took.Round(time.Millisecond), fl.Failed503())
	if code != exitIncompleteTalhoes {
		t.Fatalf("exit code %d, want %d (talhões incomplete); output:\n%s", code, exitIncompleteTalhoes, logs)
	}
	if limit := clean + budget + 30*time.Second; took > limit {
		t.Errorf("the run took %s, over the fault-free %s + the budget %s + 30 s", took, clean, budget)
	}
	inc := incompleteOf(t, out)
	if len(inc) == 0 {
		t.Fatalf("no talhão incomplete; output:\n%s", logs)
	}
	for id, reason := range inc {
		if !strings.Contains(reason, downScene) {
			t.Errorf("incomplete %s does not name the scene: %s", id, reason)
		}
		if _, err := os.Stat(filepath.Join(out, sinm.PayloadName(id))); err == nil {
			t.Errorf("incomplete talhão %s has a SINM payload", id)
		}
	}
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range inds {
		if _, ok := inc[r.FieldID]; ok {
			t.Errorf("incomplete talhão %s has an indicator row", r.FieldID)
		}
	}
	if m := manifestOf(t, out); !strings.Contains(strings.Join(problemDetails(m), "\n"), "retry budget of 10s") {
		t.Errorf("run.json does not say the retry budget gave the scene up: %v", problemDetails(m))
	}

	fl.Off.Store(true) // the fault clears
	if code, _, logs := timedRun(t, bin, remoteRunArgs(out)...); code != exitFailedTalhoes {
		t.Fatalf("re-run: exit %d, want the fault-free run's %d; output:\n%s", code, exitFailedTalhoes, logs)
	}
	sameOutputs(t, "re-run after the fault cleared", ref, out)
}

// incompleteOf returns the incomplete talhões of the run in out, with
// their reasons.
func incompleteOf(t *testing.T, out string) map[string]string {
	t.Helper()
	inc := map[string]string{}
	for _, f := range manifestOf(t, out).Failures {
		if f.Status == export.StatusIncomplete {
			inc[f.FieldID] = f.Reason
		}
	}
	return inc
}

// problemDetails lists run.json's warnings.
func problemDetails(m *runManifest) []string { return m.Warnings }

// signalState starts the binary in one state and returns once it is in
// it; the process must then stop within 10 s of SIGTERM.
type signalState struct {
	name string
	// start starts the run into out and blocks until it is in the state.
	start func(t *testing.T, bin, out string) (*exec.Cmd, *syncBuffer)
	// rerun, when set, returns the arguments of a run after the signal
	// that must give the reference outputs (and clears the fault).
	rerun func(out string) []string
}

// TestSIGTERMWithin10s (issue 26 item 4): `manejo run` ends within 10 s
// of SIGTERM, exit 1, through its own cancellation (not the shutdown
// watchdog), in each of these states: waiting for another run's lease;
// retrying an asset that answers 503 (inside GDAL's retries, between
// attempts); reading scenes from S3 after a committed batch. The batches
// it committed are kept: a re-run resumes them and writes the reference
// outputs.
func TestSIGTERMWithin10s(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the manejo binary")
	}
	if runtime.GOOS != "linux" {
		t.Skip("signals are POSIX")
	}
	ref, _ := reference(t)
	bin := manejoBinary(t)
	fl := assetDownStore(t)
	states := []signalState{
		{name: "waiting for a live run's lease", start: func(t *testing.T, bin, out string) (*exec.Cmd, *syncBuffer) {
			held, err := acquireLease(context.Background(), out, All, "live", leaseTimesOf(0), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(held.release)
			return startUntil(t, bin, remoteRunArgs(out), func(rec map[string]any) bool {
				msg, _ := rec["msg"].(string)
				return strings.HasPrefix(msg, "waiting for the lease")
			}, time.Second)
		}},
		{name: "retrying an asset answering 503", start: func(t *testing.T, bin, out string) (*exec.Cmd, *syncBuffer) {
			fl.Off.Store(false)
			n0 := fl.Failed503()
			// 5 s after the first 503: inside GDAL's back-off, the scene retries.
			return startUntil(t, bin, remoteRunArgs(out, "--retry-budget", "10m"), func(map[string]any) bool { return fl.Failed503() > n0 }, 5*time.Second)
		}, rerun: func(out string) []string { fl.Off.Store(true); return remoteRunArgs(out) }},
		{name: "reading scenes, after a committed batch", start: func(t *testing.T, bin, out string) (*exec.Cmd, *syncBuffer) {
			fl.Off.Store(true)
			// The read pass off: with it, every scene is read before the
			// first batch commits, and the last batches end in well under a
			// second, before the signal; this state is the batches' own reads.
			return startUntil(t, bin, remoteRunArgs(out, "--read-pass", "off"), func(rec map[string]any) bool { return rec["msg"] == "progress" }, 200*time.Millisecond)
		}, rerun: func(out string) []string { return remoteRunArgs(out, "--read-pass", "off") }},
	}
	for _, st := range states {
		t.Run(st.name, func(t *testing.T) {
			out := t.TempDir()
			cmd, stderr := st.start(t, bin, out)
			t0 := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			took := time.Since(t0)
			logs := stderr.String()
			t.Logf("%s: ended %s after SIGTERM (%v)", st.name, took.Round(time.Millisecond), err)
			if took > 10*time.Second || cmd.ProcessState.ExitCode() != 1 {
				t.Errorf("ended %s after SIGTERM with exit %d; want within 10 s, exit 1", took, cmd.ProcessState.ExitCode())
			}
			if !strings.Contains(logs, "interrupted") || strings.Contains(logs, "still stopping") {
				t.Errorf("not stopped by its own cancellation; stderr:\n%s", logs)
			}
			if st.rerun == nil {
				return
			}
			markers, _ := filepath.Glob(filepath.Join(out, "_staging", "*", "*", "_SUCCESS"))
			t.Logf("%d committed batch(es) kept", len(markers))
			if code, _, logs := timedRun(t, bin, st.rerun(out)...); code != 3 || len(markers) > 0 && !strings.Contains(logs, `"resumed":true`) {
				t.Errorf("re-run: exit %d (want 3), resumed the %d kept batch(es): %v; output:\n%s", code, len(markers), strings.Contains(logs, `"resumed":true`), logs)
			}
			sameOutputs(t, "re-run after SIGTERM", ref, out)
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startUntil starts bin with args and returns once ready holds, after a
// further pause. ready is asked with each JSON log record of the run and,
// every 250 ms, with nil (for conditions outside the log); the run's
// output is kept in logs.
func startUntil(t *testing.T, bin string, args []string, ready func(rec map[string]any) bool, pause time.Duration) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cmd.Stderr, cmd.Stdout = pw, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	var matched, ended atomic.Bool
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			logs.Write(append(sc.Bytes(), '\n'))
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil && ready(rec) {
				matched.Store(true)
			}
		}
		ended.Store(true)
	}()
	deadline := time.Now().Add(5 * time.Minute)
	for !matched.Load() && !ready(nil) {
		if ended.Load() {
			_ = cmd.Wait()
			t.Fatalf("the run ended before the state; output:\n%s", logs.String())
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the state was not reached in 5 minutes; output:\n%s", logs.String())
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(pause)
	return cmd, logs
}
