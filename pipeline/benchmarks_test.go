package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/manejo/manejo/sim/synth"
)

// The benchmark archive: one synthetic Sentinel-2 scene of 50 × 50 km
// (5,000 px of 10 m) holding 2,000 talhões of 10–80 ha, with an acquisition
// every 30 days from 2025-09-01 to 2026-06-30 (10 scenes). Both sizes read
// the same archive; the 100-talhão run takes the first 100 talhões of the
// file, so only the number of talhões changes.
var benchArchive = synth.Options{
	Seed: 7, Fields: 2000, SceneSizePx: 5000, RevisitDays: 30,
	Start: time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC),
	End:   time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC),
}

// benchDir builds the benchmark archive once per machine (it takes minutes)
// and keeps it in the temporary folder for later runs.
func benchDir(b *testing.B) string {
	b.Helper()
	return benchArchiveDir(b, benchArchive)
}

// subset writes the first n talhões of the archive to their own file.
func subset(b *testing.B, dir string, n int) string {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "talhoes.geojson"))
	if err != nil {
		b.Fatal(err)
	}
	var fc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fc); err != nil {
		b.Fatal(err)
	}
	var feats []json.RawMessage
	if err := json.Unmarshal(fc["features"], &feats); err != nil {
		b.Fatal(err)
	}
	if len(feats) < n {
		b.Fatalf("archive has %d talhões, want ≥ %d", len(feats), n)
	}
	fc["features"], _ = json.Marshal(feats[:n])
	out, _ := json.Marshal(fc)
	p := filepath.Join(b.TempDir(), fmt.Sprintf("talhoes-%d.geojson", n))
	if err := os.WriteFile(p, out, 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkRun runs `manejo run` in a child process on 100 and 2,000
// talhões of the same archive, batch size 64, all cores, and reports
// talhões per minute, cell observations (rows of observations.parquet) per
// second of wall time, and the child's peak resident memory
// (getrusage ru_maxrss). Peak memory must not grow with the talhões: it is
// set by the batch size.
func BenchmarkRun(b *testing.B) {
	sizes := []int{100, 2000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	dir := benchDir(b)
	bin := manejoBinary(b)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("talhoes=%d", n), func(b *testing.B) {
			fields := subset(b, dir, n)
			b.ReportAllocs()
			b.ResetTimer()
			var wall time.Duration
			var talhoes, obs int64
			var rssKB int64
			for i := 0; i < b.N; i++ {
				out := b.TempDir()
				args := runArgs(dir, out, "--quiet", "--workers", fmt.Sprint(runtime.GOMAXPROCS(0)), "--batch-size", "64")
				args[2] = fields
				cmd := exec.Command(bin, args...)
				t0 := time.Now()
				logs, err := cmd.CombinedOutput()
				wall += time.Since(t0)
				if code := cmd.ProcessState.ExitCode(); code != 0 && code != 3 {
					b.Fatalf("manejo run on %d talhões: exit %d (%v)\n%s", n, code, err, logs)
				}
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					rssKB = max(rssKB, ru.Maxrss) // KiB on Linux
				}
				m, err := readManifest(context.Background(), filepath.Join(out, "run.json"))
				if err != nil {
					b.Fatal(err)
				}
				if m.Status.Total != n {
					b.Fatalf("run.json counts %d talhões, want %d", m.Status.Total, n)
				}
				talhoes += int64(m.Status.Total)
				obs += m.Counts["observations"]
			}
			b.StopTimer()
			b.ReportMetric(float64(talhoes)/wall.Minutes(), "talhoes/min")
			b.ReportMetric(float64(obs)/wall.Seconds(), "cellobs/s")
			b.ReportMetric(float64(rssKB)/1024, "peak_rss_MB")
			b.ReportMetric(float64(obs)/float64(b.N), "cellobs/run")
		})
	}
}
