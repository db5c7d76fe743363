package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportOutRefused reproduces defect 12 of issue 19: report --out
// DIR/run.json overwrote the run's manifest with HTML. An --out that is not
// an .html file is a usage error, and the file is left as it was.
func TestReportOutRefused(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "run.json")
	if err := os.WriteFile(manifest, []byte(`{"tool":"manejo"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{manifest, filepath.Join(dir, "indicators", "part-00000-of-00001.parquet"),
		filepath.Join(dir, "sinm", "T01.json"), filepath.Join(dir, "run.lock"), dir, "s3://bucket/out/run.json"} {
		code, _, stderr := runCLI(t, "report", "--in", dir, "--out", out)
		if code != exitUsage || !strings.Contains(stderr, "want an .html file") {
			t.Errorf("--out %s: exit %d, stderr %q; want %d", out, code, stderr, exitUsage)
		}
	}
	if b, _ := os.ReadFile(manifest); string(b) != `{"tool":"manejo"}` {
		t.Errorf("run.json changed: %q", b)
	}
}
