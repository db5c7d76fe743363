package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/sim/synth"
	"github.com/manejo/manejo/storage/s3test"
)

// denseArchive is issue 26's dense portfolio: 400 talhões on one
// 20 × 20 km Sentinel-2 tile (2,048 px of 10 m, 512-px COG tiles), a scene
// every 10 days for a year (37 scenes): `manejo synth --talhoes 400 --size
// 2048 --blocksize 512 --revisit 10 --start 2025-07-01 --end 2026-06-30
// --seed 3`.
var denseArchive = synth.Options{
	Seed: 3, Fields: 400, SceneSizePx: 2048, BlockSize: 512, RevisitDays: 10,
	Start: time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC),
	End:   time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC),
}

// cogCounter counts the GETs a loopback S3 server receives for the
// scenes' COGs (not the DEM, talhões, catalog or outputs) and the bytes
// their Range headers ask for.
type cogCounter struct{ requests, bytes atomic.Int64 }

func (c *cogCounter) match(r *http.Request) bool {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, ".tif") || strings.HasSuffix(r.URL.Path, "/dem.tif") {
		return false
	}
	c.requests.Add(1)
	if rg := r.Header.Get("Range"); strings.HasPrefix(rg, "bytes=") {
		for _, part := range strings.Split(strings.TrimPrefix(rg, "bytes="), ",") {
			a, b, ok := strings.Cut(strings.TrimSpace(part), "-")
			x, e1 := strconv.ParseInt(a, 10, 64)
			y, e2 := strconv.ParseInt(b, 10, 64)
			if ok && e1 == nil && e2 == nil {
				c.bytes.Add(y - x + 1)
			}
		}
	}
	return false // count only: no fault
}

// readCase is one way of running the dense portfolio.
type readCase struct {
	name      string
	batchSize int    // 0: the default
	shards    int    // run one after the other
	pass      string // Config.ReadPass
	shardBy   string // Config.ShardBy
}

var readCases = []readCase{
	{"before/batch=64", 0, 1, ReadPassOff, ShardByHash},
	{"before/batch=400", 400, 1, ReadPassOff, ShardByHash},
	{"before/shards=4", 0, 4, ReadPassOff, ShardByHash},
	{"after/batch=64", 0, 1, ReadPassAuto, ShardBySpace},
	{"after/batch=16", 16, 1, ReadPassAuto, ShardBySpace},
	{"after/batch=400", 400, 1, ReadPassAuto, ShardBySpace},
	{"after/shards=4", 0, 4, ReadPassAuto, ShardBySpace},
	{"after/shards=16", 0, 16, ReadPassAuto, ShardBySpace},
	{"after/shards=4,hash", 0, 4, ReadPassAuto, ShardByHash},
}

// BenchmarkReadOnce runs the dense portfolio with every input on a
// loopback S3 server, in each way of readCases (before: the read pass off
// and hash shards, the run before issue 26; after: the defaults), and
// reports for each the COG bytes and GETs the server answered, as a ratio
// to the minimum the default unsharded run records in run.json
// (io.min_bytes: each needed compressed tile once, plus a header per
// file), and the wall time of all its shards one after the other, as a
// ratio to the fastest unsharded run. Unsharded runs must write the same
// files, byte for byte, as the first; sharded ones the same payloads.
// MANEJO_READONCE_CASES (a comma-separated list of names) limits the cases.
func BenchmarkReadOnce(b *testing.B) {
	dir := denseArchiveDir(b)
	var cnt cogCounter
	serveArchive(b, s3test.Faults{Match: cnt.match}, "dense", dir)
	type result = denseResult
	res := map[string]result{}
	outs := b.TempDir()      // outlives the sub-benchmarks: the first run is the reference
	refs := map[int]string{} // by batch size: the first unsharded run's output
	var ref string
	var minBytes int64
	best := time.Duration(0)
	for _, rc := range readCases {
		if want := os.Getenv("MANEJO_READONCE_CASES"); want != "" && !strings.Contains(","+want+",", ","+rc.name+",") {
			continue
		}
		b.Run(rc.name, func(b *testing.B) {
			var r result
			for range b.N {
				r = runDense(b, rc, &cnt, filepath.Join(outs, strings.NewReplacer("/", "_", "=", "", ",", "_").Replace(rc.name)))
			}
			res[rc.name] = r
			if rc.shards == 1 {
				// The part files' bytes depend on the batch size (issue 26
				// found it): runs compare with runs of their batch size.
				if refs[rc.batchSize] == "" {
					refs[rc.batchSize] = r.out
				} else {
					sameOutputs(b, rc.name, refs[rc.batchSize], r.out)
				}
				if ref == "" {
					ref = r.out
				}
				if best == 0 || r.wall < best {
					best = r.wall
				}
			} else if ref != "" {
				samePayloads(b, rc.name, ref, r.out)
			}
			if rc.name == "after/batch=64" {
				minBytes = r.min
			}
			b.ReportMetric(float64(r.bytes)/1e6, "MB")
			b.ReportMetric(float64(r.requests), "GETs")
			b.ReportMetric(r.wall.Seconds(), "s/run")
			b.ReportMetric(float64(r.min)/1e6, "min_MB")
			b.ReportMetric(r.cpu.Seconds(), "cpu_s")
			if minBytes > 0 {
				b.ReportMetric(float64(r.bytes)/float64(minBytes), "bytes/min")
			}
			if best > 0 {
				b.ReportMetric(r.wall.Seconds()/best.Seconds(), "wall/best")
			}
		})
	}
	for _, rc := range readCases {
		if r, ok := res[rc.name]; ok && minBytes > 0 {
			b.Logf("%-22s %8.1f MB  %6d GETs  %.2f× min  %6.1f s  (%.2f× best)  %6.1f s CPU", rc.name, float64(r.bytes)/1e6, r.requests,
				float64(r.bytes)/float64(minBytes), r.wall.Seconds(), r.wall.Seconds()/best.Seconds(), r.cpu.Seconds())
		}
	}
}

// runDense runs every shard of rc one after the other into one output
// folder and returns the COG bytes and GETs, the wall time and the sum of
// the shards' minimum (run.json io min_bytes).
// denseResult is what one case of BenchmarkReadOnce measured.
type denseResult struct {
	bytes, requests int64
	wall            time.Duration
	cpu             time.Duration // user + system CPU of this process, S3 server included
	out             string
	min             int64
}

func runDense(b *testing.B, rc readCase, cnt *cogCounter, out string) (r denseResult) {
	os.RemoveAll(out)
	cfg := baseConfig(b, "", out)
	remoteInputs(&cfg, "s3://dense/archive")
	cfg.AsOf = time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)
	cfg.BatchSize, cfg.ReadPass, cfg.ShardBy = rc.batchSize, rc.pass, rc.shardBy
	cnt.requests.Store(0)
	cnt.bytes.Store(0)
	t0, cpu0 := time.Now(), cpuTime(b)
	for i := range rc.shards {
		c := cfg
		c.Shard = Shard{i, rc.shards}
		if _, err := Run(context.Background(), c); err != nil {
			b.Fatal(err)
		}
		m, err := readManifest(context.Background(), filepath.Join(cfg.Out, manifestName(c.Shard)))
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range m.IO {
			r.min += v.MinBytes
		}
		if rc.shards == 1 {
			b.Logf("%s: timings %v; counts scenes_read %d, observations %d", rc.name, m.Timings, m.Counts["scenes_read"], m.Counts["observations"])
		}
	}
	r.wall, r.cpu = time.Since(t0), cpuTime(b)-cpu0
	r.bytes, r.requests, r.out = cnt.bytes.Load(), cnt.requests.Load(), cfg.Out
	return r
}

// cpuTime is the user and system CPU this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// samePayloads fails unless every SINM payload of want is in got, byte
// for byte, and got has no other.
func samePayloads(tb testing.TB, what, want, got string) {
	tb.Helper()
	w, g := testkit.HashTree(tb, filepath.Join(want, "sinm")), testkit.HashTree(tb, filepath.Join(got, "sinm"))
	if len(w) != len(g) {
		tb.Errorf("%s: %d payloads, want %d", what, len(g), len(w))
	}
	for k, v := range w {
		if g[k] != v {
			tb.Errorf("%s: payload %s differs from the unsharded run's", what, k)
		}
	}
}

// denseArchiveDir builds denseArchive once per machine and keeps it in the
// temporary folder.
func denseArchiveDir(b *testing.B) string {
	b.Helper()
	o := denseArchive
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("manejo-bench-archive-s%d-f%d-px%d-b%d-r%d-%s-%s",
		o.Seed, o.Fields, o.SceneSizePx, o.BlockSize, o.RevisitDays, o.Start.Format("20060102"), o.End.Format("20060102")))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	o.Out = dir
	if _, err := synth.Generate(context.Background(), o); err != nil {
		b.Fatalf("dense archive: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}
