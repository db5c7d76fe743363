package pipeline

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/sim/synth"
)

// memArchive is the archive of issue 15's memory target: one synthetic
// Sentinel-2 tile of 30 × 30 km (3,000 px of 10 m) holding 600 talhões,
// an acquisition every 30 days from 2025-09-01 to 2026-06-30 (11 scenes):
// `manejo synth --seed 7 --talhoes 600 --size 3000 --revisit 30 --start
// 2025-09-01 --end 2026-06-30`.
var memArchive = synth.Options{
	Seed: 7, Fields: 600, SceneSizePx: 3000, RevisitDays: 30,
	Start: time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC),
	End:   time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC),
}

// BenchmarkPeakRSS runs `manejo run` with its default flags (--batch-size
// 64, --workers = cores, GDAL's default block cache) in a child process on
// the first 60 and on all 600 talhões of memArchive, three times each,
// alternating, and reports each size's peak resident memory (the child's
// getrusage ru_maxrss), least and most of the three, and the ratio 600/60
// of the most and of the least. Issue 15 asks 600/60 ≤ 1.2: memory set by
// the batch, not by the portfolio. Each run must end with every talhão.
func BenchmarkPeakRSS(b *testing.B) {
	bin := manejoBinary(b)
	dir := memArchiveDir(b, bin)
	fields := map[int]string{60: subset(b, dir, 60), 600: subset(b, dir, 600)}
	lo, hi := map[int]float64{}, map[int]float64{}
	b.ResetTimer()
	for range b.N {
		for round := range 3 {
			for _, n := range []int{60, 600} {
				mb := peakRSS(b, bin, dir, fields[n], n)
				b.Logf("round %d, %d talhões: peak RSS %.0f MiB", round+1, n, mb)
				if lo[n] == 0 || mb < lo[n] {
					lo[n] = mb
				}
				hi[n] = max(hi[n], mb)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(lo[60], "rss60_min_MiB")
	b.ReportMetric(hi[60], "rss60_max_MiB")
	b.ReportMetric(lo[600], "rss600_min_MiB")
	b.ReportMetric(hi[600], "rss600_max_MiB")
	b.ReportMetric(lo[600]/lo[60], "ratio600/60_min")
	b.ReportMetric(hi[600]/hi[60], "ratio600/60_max")
}

// peakRSS runs manejo on the talhões file fields (n of them) with default
// flags and returns the child's peak resident memory in MiB.
func peakRSS(b *testing.B, bin, dir, fields string, n int) float64 {
	b.Helper()
	out := b.TempDir()
	args := []string{"run", "--fields", fields,
		"--catalog", filepath.Join(dir, "catalog.json"), "--dem", filepath.Join(dir, "dem.tif"),
		"--sowing", filepath.Join(dir, "sowing.csv"), "--season", "2026/2027", "--as-of", "2026-08-01",
		"--satellite-codes", "sentinel-2-l2a=S01,dem=S09", "--quiet", "--out", out}
	cmd := exec.Command(bin, args...)
	logs, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 3 {
		b.Fatalf("manejo run on %d talhões: exit %d (%v)\n%s", n, code, err, logs)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Skip("no rusage of the child on this system")
	}
	// Go starts children with vfork: a child's ru_maxrss is at least this
	// process's own peak, so that must stay below the child's.
	if own := testkit.ProcStatusKB(b, "VmHWM"); own >= ru.Maxrss {
		b.Fatalf("the child's peak RSS (%d KiB) is not above this process's own (%d KiB): it would be this process's", ru.Maxrss, own)
	}
	m, err := readManifest(context.Background(), filepath.Join(out, "run.json"))
	if err != nil {
		b.Fatal(err)
	}
	if m.Status.Total != n {
		b.Fatalf("run.json counts %d talhões, want %d", m.Status.Total, n)
	}
	os.RemoveAll(out)
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

// memArchiveDir builds memArchive once per machine with `manejo synth`
// (bin) in a child process, so that this process stays small (see
// peakRSS), and keeps it in the temporary folder for later runs.
func memArchiveDir(b *testing.B, bin string) string {
	b.Helper()
	o := memArchive
	block, tiles := "", ""
	if o.BlockSize != 0 {
		block = fmt.Sprintf("-b%d", o.BlockSize)
	}
	if o.Tiles > 0 {
		tiles = fmt.Sprintf("-t%d", o.Tiles)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("manejo-bench-archive-s%d-f%d-px%d%s-r%d-%s-%s%s",
		o.Seed, o.Fields, o.SceneSizePx, block, o.RevisitDays, o.Start.Format("20060102"), o.End.Format("20060102"), tiles))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	cmd := exec.Command(bin, "synth", "--out", dir, "--seed", fmt.Sprint(o.Seed), "--talhoes", fmt.Sprint(o.Fields),
		"--size", fmt.Sprint(o.SceneSizePx), "--revisit", fmt.Sprint(o.RevisitDays),
		"--start", o.Start.Format(time.DateOnly), "--end", o.End.Format(time.DateOnly))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("manejo synth: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// benchArchivePath is where benchArchiveDir keeps the archive of o: a
// name holding every option that shapes it.
func benchArchivePath(o synth.Options) string {
	block, tiles := "", ""
	if o.BlockSize != 0 {
		block = fmt.Sprintf("-b%d", o.BlockSize)
	}
	if o.Tiles > 0 {
		tiles = fmt.Sprintf("-t%d", o.Tiles)
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("manejo-bench-archive-s%d-f%d-px%d%s-r%d-%s-%s%s",
		o.Seed, o.Fields, o.SceneSizePx, block, o.RevisitDays, o.Start.Format("20060102"), o.End.Format("20060102"), tiles))
}

// benchArchiveDir builds the synthetic archive o once per machine and keeps it
// in the temporary folder for later runs (benchArchivePath).
func benchArchiveDir(b *testing.B, o synth.Options) string {
	b.Helper()
	dir := benchArchivePath(o)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	o.Out = dir
	start := time.Now()
	if _, err := synth.Generate(context.Background(), o); err != nil {
		b.Fatalf("benchmark archive: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("benchmark archive built in %s: %s", time.Since(start).Round(time.Second), dir)
	return dir
}
