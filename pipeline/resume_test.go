package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// onAnotherHost returns the command running bin with args as a process of
// another host: in a new UTS namespace whose hostname is host (unshare
// --uts, as root), which is what a replacement pod or an AWS Batch retry
// on another instance looks like to the lease. Without unshare or root
// the process runs on this host and the test says so: the lease reads no
// host or pid, so the outcome is the same.
func onAnotherHost(t *testing.T, host, bin string, args ...string) *exec.Cmd {
	t.Helper()
	if u, err := exec.LookPath("unshare"); err == nil && os.Geteuid() == 0 {
		if exec.Command(u, "--uts", "true").Run() == nil {
			return exec.Command(u, append([]string{"--uts", "sh", "-c", `hostname "$0" && exec "$@"`, host, bin}, args...)...)
		}
	}
	t.Logf("unshare --uts is not available here: the retry runs on this host")
	return exec.Command(bin, args...)
}

// batchCommitted tells whether a JSON log record of `manejo run` is the
// progress of a run with a batch committed: the record after each batch,
// or a periodic one (every 10 s, also while the first batch still runs on
// a loaded machine) with talhões done.
func batchCommitted(rec map[string]any) bool {
	done, _ := rec["done"].(float64)
	return rec["msg"] == "progress" && done > 0
}

// killAtFirstBatch starts bin with args and SIGKILLs it when it reports
// its first committed batch; it returns the process, not reaped: a zombie
// until the caller waits for it.
func killAtFirstBatch(t *testing.T, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && batchCommitted(rec) {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			return cmd
		}
	}
	_ = cmd.Wait()
	t.Fatalf("the run ended before its first batch; stderr:\n%s", strings.Join(lines, "\n"))
	return nil
}

// TestRetryOnAnotherHost is issue 26 item 3: a run SIGKILLed after its
// first batch (a lost node) is retried at once on another host while the
// killed process is still an unreaped zombie. The retry waits out the
// dead run's lease (unchanged for its TTL, 30 s by default), takes it over,
// resumes the committed batch and finishes within the time of an
// uninterrupted run plus two minutes, with the outputs of the
// uninterrupted run byte for byte.
func TestRetryOnAnotherHost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the manejo binary")
	}
	if runtime.GOOS != "linux" {
		t.Skip("SIGKILL, zombies and UTS namespaces are Linux")
	}
	t.Parallel()
	dir := archive(t)
	ref, _ := reference(t)
	bin := manejoBinary(t)

	full := exec.Command(bin, runArgs(dir, t.TempDir())...)
	t0 := time.Now()
	if out, err := full.CombinedOutput(); full.ProcessState.ExitCode() != 3 {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	fullTime := time.Since(t0)

	out := t.TempDir()
	killed := killAtFirstBatch(t, bin, runArgs(dir, out)...)
	retry := onAnotherHost(t, "retry-host", bin, runArgs(dir, out)...)
	var logs bytes.Buffer
	retry.Stdout, retry.Stderr = &logs, &logs
	t0 = time.Now()
	err := retry.Run()
	retryTime := time.Since(t0)
	_ = killed.Wait()                                     // reaped only now: a zombie while the retry started
	if code := retry.ProcessState.ExitCode(); code != 3 { // BAD-BOWTIE fails: exit 3
		t.Fatalf("retry exit code %d (%v), want 3; output:\n%s", code, err, logs.String())
	}
	t.Logf("uninterrupted run %s; retry after SIGKILL on another host %s", fullTime.Round(time.Millisecond), retryTime.Round(time.Millisecond))
	if retryTime > fullTime+2*time.Minute {
		t.Errorf("the retry took %s, over the uninterrupted run's %s plus two minutes", retryTime, fullTime)
	}
	for _, want := range []string{"took over the lease", `"resumed":true`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the retry's log lacks %q:\n%s", want, logs.String())
		}
	}
	sameOutputs(t, "killed and retried on another host", ref, out)
	m := manifestOf(t, out)
	if !m.Complete || m.Status.Total != 7 || m.Status.Failed != 1 {
		t.Errorf("manifest after the retry: complete %v, status %+v; want complete, 7 talhões, 1 failed", m.Complete, m.Status)
	}
}

// TestTwoLiveRunsExclude: while a run of a shard is live (held after its
// first batch, renewing its lease), a second run of the same shard into
// the same folder waits for it and is refused with ErrLocked, writing
// nothing; the first then finishes with the reference outputs.
func TestTwoLiveRunsExclude(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline")
	}
	t.Parallel()
	dir := archive(t)
	ref, _ := reference(t)
	out := t.TempDir()
	cfg := baseConfig(t, dir, out)
	cfg.LeaseTTL = time.Second
	held, resume := make(chan struct{}), make(chan struct{})
	first := cfg
	// Only the report of each committed batch: the periodic ones (every
	// ProgressEvery) come from another goroutine while a batch runs, and
	// holding one of them would let the batch go on writing.
	first.ProgressEvery = time.Hour
	batches := 0
	first.OnProgress = func(p Progress) {
		if p.Phase == "batch" {
			if batches++; batches == 1 {
				close(held)
				<-resume
			}
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), first)
		done <- err
	}()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("the first run ended before its first batch: %v", err)
	}
	before := treeNames(t, out)
	t0 := time.Now()
	_, err := Run(context.Background(), cfg)
	waited := time.Since(t0)
	if !errors.Is(err, ErrLocked) {
		close(resume)
		<-done
		t.Fatalf("second live run of the shard: %v, want ErrLocked", err)
	}
	if after := treeNames(t, out); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("the refused run changed the folder: %v → %v", before, after)
	}
	t.Logf("refused after %s: %v", waited.Round(time.Millisecond), err)
	close(resume)
	if err := <-done; err != nil {
		t.Fatalf("the first run: %v", err)
	}
	sameOutputs(t, "the run that held the lease", ref, out)
}

// treeNames lists the files below dir, but the lease record (renewed).
func treeNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(d.Name(), "run.lock") {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	return names
}
