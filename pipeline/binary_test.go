package pipeline

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests that run `manejo` as a process (TestKilledProcess,
// TestCacheConcurrentShardsAndKill, TestRunAgainstSTACAPI) compare its
// outputs byte for byte with a run of Run inside this test binary. The
// test binary holds the source as it was when `go test` compiled it;
// manejoBinary builds cmd/manejo from the working tree as it is when the
// first such test starts, minutes later on a loaded machine. A source file
// edited, checked out or rebased in between (an engineer landing on main,
// another rebasing their worktree) gives a binary of other code, whose
// outputs differ: "indicators.parquet differs from the uninterrupted run"
// when the change was in the coverage calibration, a false report of a
// nondeterministic pipeline (docs/performance.md). So the source the
// binary would be built from must be no newer than the test binary, before
// and after the build; otherwise the test stops and says why.

// binarySources lists the files `go build` reads to build cmd/manejo from
// this module: the Go and cgo files and embedded files of every package of
// the main module it imports, and go.mod and go.sum.
func binarySources() ([]string, error) {
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if .Module}}{{if .Module.Main}}{{.Dir}}{{"\t"}}{{join .GoFiles " "}} {{join .CgoFiles " "}} {{join .EmbedFiles " "}}{{"\t"}}{{.Module.Dir}}{{end}}{{end}}`,
		"github.com/manejo/manejo/cmd/manejo").Output()
	if err != nil {
		return nil, fmt.Errorf("go list cmd/manejo: %w", err)
	}
	var files []string
	root := ""
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			continue
		}
		for _, name := range strings.Fields(f[1]) {
			files = append(files, filepath.Join(f[0], name))
		}
		root = f[2]
	}
	if root == "" || len(files) == 0 {
		return nil, fmt.Errorf("go list cmd/manejo named no source file: %q", out)
	}
	return append(files, filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")), nil
}

// newerThan returns the files modified after t, with their times.
func newerThan(files []string, t time.Time) ([]string, error) {
	var newer []string
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			if os.IsNotExist(err) && filepath.Base(f) == "go.sum" {
				continue
			}
			return nil, err
		}
		if st.ModTime().After(t) {
			newer = append(newer, fmt.Sprintf("%s (modified %s)", f, st.ModTime().UTC().Format(time.RFC3339Nano)))
		}
	}
	return newer, nil
}

// checkSourceNotNewer returns an error naming the source files of
// cmd/manejo modified after this test binary was linked: a binary built
// now would not run the code the in-process reference runs.
func checkSourceNotNewer() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	st, err := os.Stat(exe)
	if err != nil {
		return err
	}
	files, err := binarySources()
	if err != nil {
		return err
	}
	newer, err := newerThan(files, st.ModTime())
	if err != nil {
		return err
	}
	if len(newer) > 0 {
		return fmt.Errorf("the source changed after this test binary was built (%s): a manejo binary built now would not be the code under test and its outputs could not be compared with the in-process runs; run the tests again: %s",
			st.ModTime().UTC().Format(time.RFC3339Nano), strings.Join(newer, ", "))
	}
	return nil
}

// TestSourceSkewDetected: a source file of cmd/manejo modified after the
// test binary was built is named by newerThan (and so stops the tests that
// run the binary, checkSourceNotNewer), one unchanged since is not. Without
// the check, TestKilledProcess reported "indicators.parquet differs from
// the uninterrupted run" for a mere edit of coverage's calibration between
// `go test` compiling and the test running.
func TestSourceSkewDetected(t *testing.T) {
	files, err := binarySources()
	if err != nil {
		t.Fatal(err)
	}
	var calib string
	for _, f := range files {
		if filepath.ToSlash(f) == filepath.ToSlash(filepath.Join(filepath.Dir(files[len(files)-2]), "coverage", "calib.go")) {
			calib = f
		}
	}
	if calib == "" {
		t.Fatalf("coverage/calib.go is not among the sources of cmd/manejo: %v", files)
	}
	dir := t.TempDir()
	old, edited := filepath.Join(dir, "old.go"), filepath.Join(dir, "edited.go")
	for _, f := range []string{old, edited} {
		if err := os.WriteFile(f, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	built := time.Now().Add(-time.Minute)
	if err := os.Chtimes(old, built.Add(-time.Hour), built.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(edited, built.Add(time.Second), built.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	newer, err := newerThan([]string{old, edited}, built)
	if err != nil {
		t.Fatal(err)
	}
	if len(newer) != 1 || !strings.HasPrefix(newer[0], edited+" ") {
		t.Errorf("newerThan = %q, want only %s", newer, edited)
	}
	// The working tree this test runs from is not newer than its binary
	// (unless someone edits it right now: then this says so).
	if err := checkSourceNotNewer(); err != nil {
		t.Error(err)
	}
}
